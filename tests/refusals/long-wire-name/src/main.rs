//! An engine that links only this plugin: it must refuse to start.

use refuse_long_wire_name as _;

fn main() {
    engine_core::Engine::builder().build_or_exit();
    println!("started");
}
