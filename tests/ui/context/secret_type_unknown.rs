use plugin_sdk::prelude::*;

/// The account's settings.
#[derive(Secrets)]
pub struct Keys {
    /// A type the panel does not know.
    #[secret(label = "Key", description = "The key.", type = "secret")]
    pub value: Secret,
}

fn main() {}
