use plugin_sdk::prelude::*;

/// The account's settings.
#[derive(Secrets)]
pub struct Host {
    /// Choices on a text field.
    #[secret(label = "Host", description = "The host.", type = "text", choices = ["a.example", "b.example"])]
    pub value: Secret,
}

fn main() {}
