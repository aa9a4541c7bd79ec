use plugin_sdk::prelude::*;

/// The account's settings.
#[derive(Secrets)]
pub struct Zone {
    /// An empty choice.
    #[secret(label = "Zone", description = "The zone.", type = "select", choices = ["a", " "])]
    pub value: Secret,
}

fn main() {}
