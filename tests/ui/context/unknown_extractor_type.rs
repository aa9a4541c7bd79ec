use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

struct Database;

/// Reads the database.
#[define_tool]
async fn query(db: &Database) -> bool {
    let _ = db;
    true
}

fn main() {}
