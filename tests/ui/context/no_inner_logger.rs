use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// Logs around the redaction.
#[define_tool]
async fn log(audit: &Audit) -> bool {
    audit.inner().is_some()
}

fn main() {}
