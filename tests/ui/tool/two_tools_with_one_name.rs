use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

mod contacts {
    use plugin_sdk::prelude::*;

    /// Counts contacts.
    #[define_tool]
    async fn count() -> u32 {
        1
    }
}

/// Counts companies.
#[define_tool(name = "count")]
async fn count_companies() -> u32 {
    2
}

fn main() {}
