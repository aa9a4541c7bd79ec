//! What the assemblers share: object keys read without a copy, and the rule for a
//! provider's fields the engine does not know.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde_json::{Map, Value};

/// An object key, borrowed from the input when it has no escapes.
pub(super) struct Key<'de>(pub(super) Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
            fn visit_string<E>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Merges a piece of an unknown field into what earlier chunks gave: strings are
/// streamed in pieces (`reasoning_content`), so they are appended; arrays are extended;
/// anything else replaces what was there; `null` adds nothing.
pub(super) fn merge_unknown(extra: &mut Map<String, Value>, key: Cow<'_, str>, value: Value) {
    if value.is_null() {
        return;
    }
    match (extra.get_mut(key.as_ref()), value) {
        (Some(Value::String(kept)), Value::String(piece)) => kept.push_str(&piece),
        (Some(Value::Array(kept)), Value::Array(more)) => kept.extend(more),
        (_, value) => {
            extra.insert(key.into_owned(), value);
        }
    }
}
