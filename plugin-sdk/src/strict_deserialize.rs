//! Deserializing a strict tool's arguments as its schema states them.
//!
//! A strict schema says `additionalProperties: false` at every level and lists every key
//! in `required` (an `Option` field as nullable). An author's `#[derive(Deserialize)]`
//! ignores unknown keys and fills a missing `Option` with `None`, so arguments the schema
//! forbids would pass. `#[derive(ToolArgs)]` therefore derives, beside the author's type,
//! a private copy of it with `#[serde(deny_unknown_fields)]`, whose every field is read
//! through [`StrictDeserialize`] (which makes every key required, since serde defaults a
//! missing field only when it has no `deserialize_with`), and moves the fields across.
//! It is the same serde code with two more checks; an internally tagged or untagged enum
//! is read through a buffered `serde_json::Value` with its error path tracked. The cost
//! per call is measured in BENCHMARKS.md.

use std::collections::VecDeque;
use std::marker::PhantomData;

use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor,
};
use serde::Deserialize;
use serde_json::Value;
use serde_path_to_error::Segment;

use crate::json_path::{self, Path};

/// A type read as its strict schema states: no key it does not list, at any depth, and
/// every key it lists present. Implemented where [`StrictSchema`](crate::StrictSchema)
/// is: by the leaves, the standard containers, and `#[derive(ToolArgs)]`.
///
/// Implement it by hand only beside a hand-written `StrictSchema`, refusing what that
/// schema does not allow: dispatch reads the type through it and nothing else.
#[diagnostic::on_unimplemented(
    message = "`{Self}` implements `StrictSchema` by hand but not `StrictDeserialize`",
    label = "dispatch would read it more loosely than its schema states",
    note = "derive it with `#[derive(Deserialize, JsonSchema, ToolArgs)]`, or implement `plugin_sdk::StrictDeserialize` so that it refuses what the schema does not allow"
)]
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
// emits), so the fallback only keeps that the one error: it is never chosen in a build
// that compiles, since `StrictSchema` requires `StrictDeserialize`.

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
/// of the value, so that an error in it is placed at the value (`tagged`), where serde's
/// own buffer would place it wherever the deserializer went on to. The error's path
/// inside the value is tracked while the value is read, and carried in the error (see
/// `json_path::inside`). A key twice in the value is refused, as serde refuses it in
/// a struct it reads directly.
///
/// An internally tagged enum (`tag`: its tag's key) is read as the externally tagged
/// copy `T` is, from `{"<tag value>": {<the other keys>}}`: serde would read its
/// variant through a buffer of its own, where no path is tracked.
pub fn deserialize_buffered<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
    tag: Option<&'static str>,
) -> Result<T, D::Error> {
    deserializer.deserialize_any(Buffered {
        tag,
        read: PhantomData,
    })
}

/// The visitor of [`deserialize_buffered`].
struct Buffered<T> {
    tag: Option<&'static str>,
    read: PhantomData<T>,
}

/// `value`, an internally tagged enum's object, as the externally tagged enum reads it.
fn externally_tagged<E: serde::de::Error>(value: Value, tag: &'static str) -> Result<Value, E> {
    let Value::Object(mut object) = value else {
        let expected = format!("an object with the key `{tag}`");
        return Err(E::custom(format_args!(
            "invalid type: {}, expected {expected}",
            Unexpected(&value)
        )));
    };
    let variant = match object.shift_remove(tag) {
        Some(Value::String(variant)) => variant,
        Some(other) => {
            return Err(E::custom(json_path::inside(
                &[json_path::Segment::Key(tag.to_owned())],
                &format!(
                    "invalid type: {}, expected a variant name",
                    Unexpected(&other)
                ),
            )))
        }
        None => return Err(E::missing_field(tag)),
    };
    Ok(Value::Object(
        [(variant, Value::Object(object))].into_iter().collect(),
    ))
}

/// A JSON value as serde's errors name what they found: `integer `7``.
struct Unexpected<'v>(&'v Value);

impl std::fmt::Display for Unexpected<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        use serde::de::Unexpected as U;
        let unexpected = match self.0 {
            Value::Null => U::Unit,
            Value::Bool(value) => U::Bool(*value),
            Value::Number(number) => match (number.as_u64(), number.as_i64()) {
                (Some(value), _) => U::Unsigned(value),
                (_, Some(value)) => U::Signed(value),
                _ => U::Float(number.as_f64().unwrap_or_default()),
            },
            Value::String(value) => U::Str(value),
            Value::Array(_) => U::Seq,
            Value::Object(_) => U::Map,
        };
        unexpected.fmt(formatter)
    }
}

impl<T: DeserializeOwned> Buffered<T> {
    fn read<E: serde::de::Error>(self, value: Value) -> Result<T, E> {
        let value = match self.tag {
            Some(tag) => externally_tagged(value, tag)?,
            None => value,
        };
        serde_path_to_error::deserialize(&value).map_err(|error| {
            let mut path: Path = error
                .path()
                .iter()
                .filter_map(|segment| match segment {
                    Segment::Seq { index } => Some(json_path::Segment::Index(*index)),
                    Segment::Map { key } => Some(json_path::Segment::Key(key.clone())),
                    Segment::Enum { variant } => Some(json_path::Segment::Key(variant.clone())),
                    Segment::Unknown => None,
                })
                .collect();
            let mut reason = error.into_inner().to_string();
            if let Some((inner, inner_reason)) = json_path::within(&reason) {
                // A buffered value inside this one placed it.
                path.extend(inner);
                reason = inner_reason.to_owned();
            } else if let Some((key, _)) = json_path::unknown_key(&reason) {
                // An unknown key is named at its object: serde raised it at the key
                // (the path ends with it), or, for an internally tagged variant, once
                // the object was read.
                let at_object = value_at(&value, &path)
                    .and_then(Value::as_object)
                    .is_some_and(|object| object.contains_key(key));
                if !at_object && path.last() == Some(&json_path::Segment::Key(key.to_owned())) {
                    path.pop();
                }
            }
            if self.tag.is_some() && !path.is_empty() {
                // The variant's key was made up: its keys are the tag's neighbours.
                path.remove(0);
            }
            E::custom(json_path::inside(&path, &reason))
        })
    }
}

/// The value at `path` in `value`.
fn value_at<'v>(value: &'v Value, path: &[json_path::Segment]) -> Option<&'v Value> {
    path.iter().try_fold(value, |value, segment| match segment {
        json_path::Segment::Key(key) => value.get(key),
        json_path::Segment::Index(index) => value.get(index),
    })
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Buffered<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a value as the schema describes")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<T, E> {
        self.read(value.into())
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<T, E> {
        self.read(value.into())
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<T, E> {
        self.read(value.into())
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<T, E> {
        self.read(value.into())
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<T, E> {
        self.read(value.into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
        self.read(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<T, E> {
        self.read(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        self.read(UniqueKeys.visit_seq(seq)?)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        self.read(UniqueKeys.visit_map(map)?)
    }
}

/// Reads any JSON value as a `Value`, refusing a key twice in an object at any depth
/// (a `Value` would keep the last).
#[derive(Clone, Copy)]
struct UniqueKeys;

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(value.into())
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(value.into())
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(value.into())
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(value.into())
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(value.into())
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(value.into())
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        while let Some(value) = seq.next_element_seed(self)? {
            list.push(value);
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                // serde's own words for a struct's repeated field.
                return Err(A::Error::custom(format_args!("duplicate field `{key}`")));
            }
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}
