use plugin_sdk::prelude::*;

/// The region of the account.
#[derive(Secrets)]
pub struct Region {
    /// A select with nothing to select.
    #[secret(label = "Region", description = "Where the account lives.", type = "select")]
    pub region: Secret,
    /// A choice listed twice, and an empty one.
    #[secret(label = "Zone", description = "The zone.", type = "select", choices = ["a", "a", " "])]
    pub zone: Secret,
}

fn main() {}
