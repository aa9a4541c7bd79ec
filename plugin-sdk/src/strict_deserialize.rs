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

use serde::de::{DeserializeOwned, Deserializer};
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
    fn deserialize_field<'de, D: Deserializer<'de>>(&self, deserializer: D)
        -> Result<T, D::Error>;
}

impl<T: StrictDeserialize> ViaStrict<T> for Probe<T> {
    fn deserialize_field<'de, D: Deserializer<'de>>(
        &self,
        deserializer: D,
    ) -> Result<T, D::Error> {
        T::deserialize_strict(deserializer)
    }
}

/// Reads any other field as its own `Deserialize` does.
pub trait NotStrict<T> {
    /// Reads the field.
    fn deserialize_field<'de, D: Deserializer<'de>>(&self, deserializer: D)
        -> Result<T, D::Error>;
}

impl<T: DeserializeOwned> NotStrict<T> for &Probe<T> {
    fn deserialize_field<'de, D: Deserializer<'de>>(
        &self,
        deserializer: D,
    ) -> Result<T, D::Error> {
        T::deserialize(deserializer)
    }
}
