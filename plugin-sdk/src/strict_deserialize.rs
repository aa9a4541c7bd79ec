//! Deserializing a strict tool's arguments as its schema states them.
//!
//! A strict schema says `additionalProperties: false` at every level and lists every key
//! in `required` (an `Option` field as nullable). An author's `#[derive(Deserialize)]`
//! ignores unknown keys and fills a missing `Option` with `None`, so arguments the schema
//! forbids would pass. `#[derive(ToolArgs)]` therefore derives, beside the author's type,
//! a private copy of it with `#[serde(deny_unknown_fields)]`, whose every field is read
//! through [`StrictDeserialize`] (which makes every key required, since serde defaults a
//! missing field only when it has no `deserialize_with`), and moves the fields across.
//! It is the same serde code with two more checks, so it costs no more at run time.

use std::collections::VecDeque;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A type read as its strict schema states: no key it does not list, at any depth, and
/// every key it lists present. Implemented where [`StrictSchema`](crate::StrictSchema)
/// is: by the leaves, the standard containers, and `#[derive(ToolArgs)]`.
#[doc(hidden)]
pub trait StrictDeserialize: Sized {
    /// Reads `Self` from `deserializer`, refusing what the schema does not allow.
    fn deserialize_strict<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

macro_rules! plain_leaves {
    ($($ty:ty),* $(,)?) => {$(
        impl StrictDeserialize for $ty {
            fn deserialize_strict<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Self::deserialize(deserializer)
            }
        }
    )*};
}

plain_leaves!(
    String,
    bool,
    char,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    f32,
    f64,
    crate::context::ArtifactHandle,
);

/// `T` read strictly, where serde asks for a `Deserialize`: inside the containers.
struct Strict<T>(T);

impl<'de, T: StrictDeserialize> Deserialize<'de> for Strict<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize_strict(deserializer).map(Strict)
    }
}

impl<T: StrictDeserialize> StrictDeserialize for Option<T> {
    fn deserialize_strict<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<Strict<T>>::deserialize(deserializer)?.map(|Strict(value)| value))
    }
}

impl<T: StrictDeserialize> StrictDeserialize for Box<T> {
    fn deserialize_strict<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize_strict(deserializer).map(Box::new)
    }
}

impl<T: StrictDeserialize> StrictDeserialize for Vec<T> {
    fn deserialize_strict<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let list = Vec::<Strict<T>>::deserialize(deserializer)?;
        Ok(list.into_iter().map(|Strict(value)| value).collect())
    }
}

impl<T: StrictDeserialize> StrictDeserialize for VecDeque<T> {
    fn deserialize_strict<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize_strict(deserializer).map(VecDeque::from)
    }
}

// How a field of the private copy is read. Generated code calls
// `(&Probe::<Field>::NEW).deserialize_field(d)`: method resolution picks `ViaStrict` when
// the field's type is strict, and otherwise (by autoref) `NotStrict`. A field that is not
// strict is already a compile error at its type (the `StrictSchema` bound `ToolArgs`
// emits), so the fallback keeps that the only error; it reads the field as its own
// `Deserialize` does, for a type that implements `StrictSchema` by hand.

/// The type of one field, for choosing how to read it.
pub struct Probe<T>(PhantomData<T>);

impl<T> Probe<T> {
    /// The probe.
    pub const NEW: Self = Self(PhantomData);
}

/// Reads a strict field strictly.
pub trait ViaStrict<T> {
    /// Reads the field.
    fn deserialize_field<'de, D: Deserializer<'de>>(&self, deserializer: D) -> Result<T, D::Error>;
}

impl<T: StrictDeserialize> ViaStrict<T> for Probe<T> {
    fn deserialize_field<'de, D: Deserializer<'de>>(&self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_strict(deserializer)
    }
}

/// Reads any other field as its own `Deserialize` does.
pub trait NotStrict<T> {
    /// Reads the field.
    fn deserialize_field<'de, D: Deserializer<'de>>(&self, deserializer: D) -> Result<T, D::Error>;
}

impl<T: DeserializeOwned> NotStrict<T> for &Probe<T> {
    fn deserialize_field<'de, D: Deserializer<'de>>(&self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize(deserializer)
    }
}

/// Reads a strict copy that serde buffers before it reads it (an internally tagged or an
/// untagged enum): through a `serde_json::Value` read inside the deserializer's own visit
/// of the value, so that an error in it is placed at the value (`tagged.reason`), where
/// serde's own buffer would place it wherever the deserializer went on to.
pub fn deserialize_buffered<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_any(Buffered(PhantomData))
}

/// The visitor of [`deserialize_buffered`].
struct Buffered<T>(PhantomData<T>);

impl<T: DeserializeOwned> Buffered<T> {
    fn read<E: serde::de::Error>(value: serde_json::Value) -> Result<T, E> {
        T::deserialize(value).map_err(E::custom)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Buffered<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a value as the schema describes")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<T, E> {
        Self::read(value.into())
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<T, E> {
        Self::read(value.into())
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<T, E> {
        Self::read(value.into())
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<T, E> {
        Self::read(value.into())
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<T, E> {
        Self::read(value.into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
        Self::read(serde_json::Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<T, E> {
        Self::read(serde_json::Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        Self::read(serde_json::Value::deserialize(SeqAccessDeserializer::new(
            seq,
        ))?)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        Self::read(serde_json::Value::deserialize(MapAccessDeserializer::new(
            map,
        ))?)
    }
}
