use plugin_sdk::prelude::*;

/// The keys of the account.
#[derive(Secrets)]
pub struct Keys {
    /// A type the panel does not know.
    #[secret(label = "Key", description = "The key.", type = "secret")]
    pub key: Secret,
    /// Choices on a text field.
    #[secret(label = "Host", description = "The host.", type = "text", choices = ["a.example", "b.example"])]
    pub host: Secret,
}

fn main() {}
