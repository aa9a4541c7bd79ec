use plugin_sdk::prelude::*;

/// The account's settings.
#[derive(Secrets)]
pub struct Zone {
    /// A choice listed twice.
    #[secret(label = "Zone", description = "The zone.", type = "select", choices = ["a", "a"])]
    pub value: Secret,
}

fn main() {}
