//! Reading a strict tool's arguments as its schema states them, through the author's own
//! `Deserialize`.
//!
//! A strict schema says `additionalProperties: false` at every level and lists every key
//! in `required` (an `Option` field as nullable). A derived `Deserialize` ignores unknown
//! keys and fills a missing `Option` with `None`, so arguments the schema forbids would
//! pass. [`Strict`] wraps the JSON deserializer and hands every nested value the same
//! wrapper, so that wherever serde reads a struct (or a struct variant) it names the keys
//! it takes (`deserialize_struct`'s `fields`), and the wrapper refuses any other key, at
//! the key.
//!
//! What the wrapper cannot judge as it reads marks the read `unchecked`, and the caller
//! then checks the arguments against the schema (`strict_check`): a key left out (an
//! `Option` the call must send as null, or the content an adjacently tagged unit variant
//! does without: serde's list of keys does not tell the two apart), and a type whose
//! reading names no keys (an internally tagged or untagged enum, which serde buffers
//! before it reads; a map a hand-written `Deserialize` reads). The arguments of a tool
//! without such a type are read once when they are what the schema states.
//!
//! Nothing here is generic over the author's type but what serde's own derive already
//! is, so a tool costs no second `Deserialize` (BENCHMARKS.md, "Compile time of a
//! 100-tool crate").

use std::cell::Cell;
use std::fmt;

use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, Error as _, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};

/// A deserializer that holds every struct it reads to the keys the struct names.
pub(crate) struct Strict<'u, D> {
    inner: D,
    /// Set when a part was read without naming its keys.
    unchecked: &'u Cell<bool>,
}

impl<'u, D> Strict<'u, D> {
    pub(crate) fn new(inner: D, unchecked: &'u Cell<bool>) -> Self {
        Self { inner, unchecked }
    }

    fn wrap<T>(&self, inner: T) -> Wrapped<'u, T> {
        Wrapped {
            inner,
            unchecked: self.unchecked,
        }
    }
}

/// A visitor, an access or a seed whose nested deserializers are wrapped in [`Strict`].
struct Wrapped<'u, T> {
    inner: T,
    unchecked: &'u Cell<bool>,
}

impl<'u, T> Wrapped<'u, T> {
    fn wrap<U>(&self, inner: U) -> Wrapped<'u, U> {
        Wrapped {
            inner,
            unchecked: self.unchecked,
        }
    }

    fn strict<D>(&self, inner: D) -> Strict<'u, D> {
        Strict::new(inner, self.unchecked)
    }
}

/// The deserializer's methods that only pass the (wrapped) visitor on.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            let visitor = self.wrap(visitor);
            self.inner.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<'_, D> {
    type Error = D::Error;

    forward!(
        deserialize_bool(),
        deserialize_i8(),
        deserialize_i16(),
        deserialize_i32(),
        deserialize_i64(),
        deserialize_i128(),
        deserialize_u8(),
        deserialize_u16(),
        deserialize_u32(),
        deserialize_u64(),
        deserialize_u128(),
        deserialize_f32(),
        deserialize_f64(),
        deserialize_char(),
        deserialize_str(),
        deserialize_string(),
        deserialize_bytes(),
        deserialize_byte_buf(),
        deserialize_option(),
        deserialize_unit(),
        deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str),
        deserialize_seq(),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
        deserialize_identifier(),
        deserialize_ignored_any(),
    );

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        // serde buffers an internally tagged or untagged enum this way, and reads its
        // variant from the buffer, where no key is checked.
        self.unchecked.set(true);
        let visitor = self.wrap(visitor);
        self.inner.deserialize_any(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        // A map does not name its keys.
        self.unchecked.set(true);
        let visitor = self.wrap(visitor);
        self.inner.deserialize_map(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = Struct {
            visitor,
            fields,
            unchecked: self.unchecked,
        };
        self.inner.deserialize_struct(name, fields, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A visitor's methods that pass a value on unchanged.
macro_rules! visit {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<E: serde::de::Error>(self, value: $ty) -> Result<V::Value, E> {
            self.inner.$method(value)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrapped<'_, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(formatter)
    }

    visit!(
        visit_bool(bool),
        visit_i8(i8),
        visit_i16(i16),
        visit_i32(i32),
        visit_i64(i64),
        visit_i128(i128),
        visit_u8(u8),
        visit_u16(u16),
        visit_u32(u32),
        visit_u64(u64),
        visit_u128(u128),
        visit_f32(f32),
        visit_f64(f64),
        visit_char(char),
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>),
    );

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let deserializer = self.strict(deserializer);
        self.inner.visit_some(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        let deserializer = self.strict(deserializer);
        self.inner.visit_newtype_struct(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let seq = self.wrap(seq);
        self.inner.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let map = self.wrap(map);
        self.inner.visit_map(map)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        let data = self.wrap(data);
        self.inner.visit_enum(data)
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Wrapped<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        let deserializer = self.strict(deserializer);
        self.inner.deserialize(deserializer)
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrapped<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let seed = self.wrap(seed);
        self.inner.next_element_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Wrapped<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let seed = self.wrap(seed);
        self.inner.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let seed = self.wrap(seed);
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, 'u, A: EnumAccess<'de>> EnumAccess<'de> for Wrapped<'u, A> {
    type Error = A::Error;
    type Variant = Wrapped<'u, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let unchecked = self.unchecked;
        let (value, variant) = self.inner.variant_seed(seed)?;
        Ok((
            value,
            Wrapped {
                inner: variant,
                unchecked,
            },
        ))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Wrapped<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        let seed = self.wrap(seed);
        self.inner.newtype_variant_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        let visitor = self.wrap(visitor);
        self.inner.tuple_variant(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let visitor = Struct {
            visitor,
            fields,
            unchecked: self.unchecked,
        };
        self.inner.struct_variant(fields, visitor)
    }
}

/// A struct's visitor, with the keys the struct takes.
struct Struct<'u, V> {
    visitor: V,
    fields: &'static [&'static str],
    unchecked: &'u Cell<bool>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Struct<'_, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        self.visitor.expecting(formatter)
    }

    // serde reads a struct from a JSON array too, by position; the schema says object.
    // "array", where serde_json says "sequence": the error is raised inside the array,
    // which `arguments_error` then leaves.
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<V::Value, A::Error> {
        Err(A::Error::invalid_type(Unexpected::Other("array"), &self))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let Struct {
            visitor,
            fields,
            unchecked,
        } = self;
        visitor.visit_map(Keys {
            map: Wrapped {
                inner: map,
                unchecked,
            },
            fields,
            seen: Seen::new(fields.len()),
        })
    }
}

/// A struct's members, refused where the key is not among `fields`; one of `fields`
/// left out marks the read for the schema's check.
struct Keys<'u, A> {
    map: Wrapped<'u, A>,
    fields: &'static [&'static str],
    seen: Seen,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Keys<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let key = Key {
            seed,
            fields: self.fields,
            seen: &mut self.seen,
        };
        let key = self.map.inner.next_key_seed(key)?;
        if key.is_none() && !self.seen.all() {
            // Left out: an `Option` the call must send as null, or a key the struct may
            // do without (an adjacently tagged unit variant's content), which serde's
            // list of keys does not tell apart. The schema does.
            self.map.unchecked.set(true);
        }
        Ok(key)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// One key of a struct: checked against its fields, then read by serde's own seed.
struct Key<'s, K> {
    seed: K,
    fields: &'static [&'static str],
    seen: &'s mut Seen,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for Key<'_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, K: DeserializeSeed<'de>> Visitor<'de> for Key<'_, K> {
    type Value = K::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<K::Value, E> {
        self.seen.mark(self.fields, key)?;
        self.seed.deserialize(key.into_deserializer())
    }
}

/// Which of a struct's fields were read.
enum Seen {
    Few { bits: u64, fields: usize },
    Many(Vec<bool>),
}

impl Seen {
    fn new(fields: usize) -> Self {
        match fields <= 64 {
            true => Self::Few { bits: 0, fields },
            false => Self::Many(vec![false; fields]),
        }
    }

    // Generic over the error alone, not over the struct's visitor: one copy for every
    // arguments type (BENCHMARKS.md, "Compile time of a 100-tool crate").

    /// Marks `key` read, or refuses it when the struct does not take it.
    fn mark<E: serde::de::Error>(
        &mut self,
        fields: &'static [&'static str],
        key: &str,
    ) -> Result<(), E> {
        let Some(index) = fields.iter().position(|field| *field == key) else {
            return Err(E::unknown_field(key, fields));
        };
        match self {
            Self::Few { bits, .. } => *bits |= 1 << index,
            Self::Many(seen) => seen[index] = true,
        }
        Ok(())
    }

    /// Whether every field was read.
    fn all(&self) -> bool {
        match self {
            Self::Few {
                bits,
                fields: count,
            } => bits.trailing_ones() as usize >= *count,
            Self::Many(seen) => seen.iter().all(|seen| *seen),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Address {
        street: String,
        city: Option<String>,
        tags: Vec<Option<Tag>>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Tag {
        Plain,
        Named { name: String },
    }

    /// Whether reading `text` as `T` marked itself for the schema's check.
    fn unchecked<T: for<'de> Deserialize<'de>>(text: &str) -> (bool, bool) {
        let unchecked = Cell::new(false);
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let read = T::deserialize(Strict::new(&mut deserializer, &unchecked));
        (read.is_ok(), unchecked.get())
    }

    #[test]
    fn arguments_the_schema_states_are_read_once() {
        let whole =
            r#"{"street": "s", "city": null, "tags": [null, "Plain", {"Named": {"name": "n"}}]}"#;
        assert_eq!(unchecked::<Address>(whole), (true, false));
        // A key left out is the schema's to judge.
        assert_eq!(
            unchecked::<Address>(r#"{"street": "s", "tags": []}"#),
            (true, true)
        );
    }

    #[test]
    fn the_65th_field_is_counted_as_the_first_64_are() {
        let fields: Vec<String> = (0..65).map(|i| format!("f{i}")).collect();
        let fields: &'static [&'static str] =
            Vec::leak(fields.iter().map(|f| &*String::leak(f.clone())).collect());
        for count in [64, 65] {
            let fields = &fields[..count];
            let mut seen = Seen::new(count);
            for field in &fields[..count - 1] {
                seen.mark::<serde_json::Error>(fields, field).unwrap();
            }
            assert!(!seen.all(), "{count} fields, the last not read");
            seen.mark::<serde_json::Error>(fields, fields[count - 1])
                .unwrap();
            assert!(seen.all(), "{count} fields, all read");
        }
    }
}
