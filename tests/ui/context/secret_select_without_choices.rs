use plugin_sdk::prelude::*;

/// The account's settings.
#[derive(Secrets)]
pub struct Region {
    /// A select with nothing to select.
    #[secret(label = "Region", description = "Where the account lives.", type = "select")]
    pub value: Secret,
}

fn main() {}
