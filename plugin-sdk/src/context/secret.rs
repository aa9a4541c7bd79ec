//! Secrets: values a tool declares by key and receives only when the agent has them.

use std::fmt;

use crate::LocalizedText;

/// A secret value (an API key, a token). It never prints: `Debug` and `Display` show
/// `Secret(***)`; the value is reached only through [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`; for engines, and for tests that build a context by hand.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that needs it (an `Authorization` header). Never
    /// log it: the audit logger redacts it, other loggers do not.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// One key a tool needs, as `#[derive(Secrets)]` declares it: the field name is the key;
/// the label and description are what the panel shows whoever configures the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecretSpec {
    /// The key, as configured for an agent (`crm_api_key`).
    pub key: &'static str,
    /// A title for the configuration field.
    pub label: LocalizedText,
    /// One sentence on what the key is for.
    pub description: LocalizedText,
    /// How the person who configures it enters it.
    pub kind: SecretKind,
}

/// How a secret is entered, as `#[secret(type = ...)]` declares it (the seed's `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretKind {
    /// Shown as typed (`type = "text"`): an account id, a region's host.
    Text,
    /// Masked (`type = "password"`, the default): a key, a token.
    Password,
    /// One of these values, stored and shown as written (`type = "select"`,
    /// `choices = ["eu", "us"]`); the engine refuses a configured value that is none.
    Select(&'static [&'static str]),
}

impl SecretKind {
    /// The type's name, as `#[secret(type = ...)]` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Password => "password",
            Self::Select(_) => "select",
        }
    }
}

/// A struct of [`Secret`] fields, one per key, made with `#[derive(Secrets)]`. Taking it
/// as a tool parameter declares its keys: the engine equips the tool for an agent only
/// when every key is configured there, and hands the tool those keys and no other.
pub trait SecretBundle: Sized {
    /// The keys, in field order.
    const KEYS: &'static [SecretSpec];

    /// Builds the bundle from the values the call carries; `None` names a missing key.
    fn from_values(lookup: &dyn Fn(&str) -> Option<Secret>) -> Result<Self, &'static str>;
}

/// What a `#[derive(Secrets)]` field may be: a [`Secret`].
#[diagnostic::on_unimplemented(
    message = "a `#[derive(Secrets)]` field must be a `Secret`, not `{Self}`",
    label = "not a `Secret`",
    note = "each field is one key the agent configures: write `field: Secret`, and read the value with `.expose()`"
)]
pub trait FromSecret {
    /// The field from the configured value.
    fn from_secret(secret: Secret) -> Self;
}

impl FromSecret for Secret {
    fn from_secret(secret: Secret) -> Self {
        secret
    }
}
