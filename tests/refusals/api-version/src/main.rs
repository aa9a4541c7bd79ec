//! An engine that links only this plugin: it must refuse to start.

use refuse_api_version as _;

fn main() {
    engine_core::Engine::builder().build_or_exit();
    println!("started");
}
