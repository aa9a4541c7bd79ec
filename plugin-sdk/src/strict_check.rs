//! Checking arguments against their strict schema, where serde's reading of them did not
//! name the keys it takes (see `strict_read`): an internally tagged or untagged enum, a
//! map that a hand-written `Deserialize` reads.
//!
//! It walks the JSON value beside the schema that `input_schema_for` gives (`$ref`,
//! `anyOf`, `type`, `const`, `enum`, `properties`, `required`, `additionalProperties`,
//! `items`, bounds) and names the first place the two differ, in serde's words, so that
//! the error reads as any other. Among `anyOf` branches it follows the one serde picks:
//! the first the value fits when unknown keys are ignored and left-out nullable keys
//! allowed (an internally tagged enum's by its tag, an untagged enum's by trying each in
//! turn), and then holds the value to that branch strictly. An untagged variant that
//! reads a subset of a later variant's keys therefore refuses the later variant's
//! arguments, where serde would have read them as the earlier one and dropped the rest.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::json_path::{Path, Segment};
use crate::schema::types;

/// Where and why `value` does not fit `schema`: the path of the value, or of the object
/// for a key's error (serde's "unknown field" and "missing field").
pub(crate) type Misfit = (Path, String);

/// Checks `value` against `schema`, a root schema as `input_schema_for` gives it.
pub(crate) fn check(value: &Value, schema: &Value) -> Result<(), Misfit> {
    let fits = RefCell::default();
    let checker = Checker {
        root: schema,
        lenient: false,
        fits: &fits,
    };
    checker.node(value, schema, &mut Path::new())
}

/// What lenient walks found, by the addresses of the value and the branch.
type Fits = HashMap<(usize, usize), Result<(), Misfit>>;

#[derive(Clone, Copy)]
struct Checker<'s> {
    root: &'s Value,
    /// Unknown keys ignored and left-out nullable keys allowed: serde's own reading, for
    /// choosing an `anyOf` branch.
    lenient: bool,
    /// Whether a value fits a branch leniently, by the two's addresses: each pair is
    /// walked once, however many branches above it share it (variants with the same
    /// recursive key would otherwise double the walk at every level).
    fits: &'s RefCell<Fits>,
}

impl<'s> Checker<'s> {
    /// The schema `node` stands for: its `$ref` followed (`#` or `#/$defs/Name`, the name
    /// percent-encoded as schemars writes it); `None` for a reference that leads nowhere,
    /// or round in circles, which no value is taken to fit.
    fn resolve(&self, mut node: &'s Value) -> Option<&'s Value> {
        for _ in 0..32 {
            let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
                return Some(node);
            };
            let pointer = percent_decoded(reference.strip_prefix('#')?)?;
            node = self.root.pointer(&pointer)?;
        }
        None
    }

    fn node(&self, value: &Value, node: &'s Value, path: &mut Path) -> Result<(), Misfit> {
        let Some(node) = self.resolve(node) else {
            return Err(misfit(
                path,
                "a schema reference that leads nowhere".to_owned(),
            ));
        };
        let Some(node) = node.as_object() else {
            return Ok(());
        };
        if let Some(Value::Array(branches)) = node.get("anyOf").or_else(|| node.get("oneOf")) {
            self.branches(value, branches, path)?;
        }
        if types(node).next().is_some() && !types(node).any(|name| fits(value, name)) {
            let expected: Vec<&str> = types(node).map(article).collect();
            return Err(misfit(
                path,
                format!(
                    "invalid type: {}, expected {}",
                    Unexpected(value),
                    expected.join(" or ")
                ),
            ));
        }
        if let Some(constant) = node.get("const") {
            if constant != value {
                return Err(misfit(path, variant_error(value, &[constant])));
            }
        }
        if let Some(Value::Array(allowed)) = node.get("enum") {
            if !allowed.contains(value) {
                let allowed: Vec<&Value> = allowed.iter().collect();
                return Err(misfit(path, variant_error(value, &allowed)));
            }
        }
        match value {
            Value::Object(object) => self.object(object, node, path),
            Value::Array(items) => match node.get("items") {
                Some(schema) => items.iter().enumerate().try_for_each(|(index, item)| {
                    path.push(Segment::Index(index));
                    self.node(item, schema, path)?;
                    path.pop();
                    Ok(())
                }),
                None => Ok(()),
            },
            Value::Number(number) => {
                let number = number.as_f64().unwrap_or_default();
                match outside(node, number, "minimum", "maximum") {
                    Some(range) => Err(misfit(
                        path,
                        format!(
                            "invalid value: {}, expected a number {range}",
                            Unexpected(value)
                        ),
                    )),
                    None => Ok(()),
                }
            }
            Value::String(text) => {
                let count = text.chars().count();
                match outside(node, count as f64, "minLength", "maxLength") {
                    Some(range) => Err(misfit(
                        path,
                        format!("invalid length: a string of {count} characters, expected {range}"),
                    )),
                    None => Ok(()),
                }
            }
            Value::Null | Value::Bool(_) => Ok(()),
        }
    }

    fn object(
        &self,
        object: &Map<String, Value>,
        node: &'s Map<String, Value>,
        path: &mut Path,
    ) -> Result<(), Misfit> {
        let properties = node.get("properties").and_then(Value::as_object);
        for (key, item) in object {
            let schema = match properties.and_then(|properties| properties.get(key)) {
                Some(schema) => schema,
                None => match node.get("additionalProperties") {
                    Some(Value::Bool(false)) if !self.lenient => {
                        let known: Vec<&str> = properties
                            .into_iter()
                            .flat_map(|properties| properties.keys().map(String::as_str))
                            .collect();
                        return Err((path.clone(), unknown_field(key, &known)));
                    }
                    Some(schema @ Value::Object(_)) => schema,
                    _ => continue,
                },
            };
            path.push(Segment::Key(key.clone()));
            self.node(item, schema, path)?;
            path.pop();
        }
        let required = node.get("required").and_then(Value::as_array);
        for key in required.into_iter().flatten().filter_map(Value::as_str) {
            if object.contains_key(key) {
                continue;
            }
            // serde reads a left-out key as `None` where the value may be null.
            let schema = properties.and_then(|properties| properties.get(key));
            let nullable = || {
                schema
                    .is_some_and(|schema| self.node(&Value::Null, schema, &mut Path::new()).is_ok())
            };
            if !(self.lenient && nullable()) {
                return Err((path.clone(), format!("missing field `{key}`")));
            }
        }
        Ok(())
    }

    /// The branch serde reads `value` as, held to strictly; or, when none fits, the
    /// misfit of the branch that got furthest into the value.
    fn branches(&self, value: &Value, branches: &'s [Value], path: &Path) -> Result<(), Misfit> {
        let lenient = Checker {
            lenient: true,
            ..*self
        };
        let mut misfits = Vec::new();
        for branch in branches {
            let pair = (
                value as *const Value as usize,
                branch as *const Value as usize,
            );
            let known = self.fits.borrow().get(&pair).cloned();
            let fit = known.unwrap_or_else(|| {
                let fit = lenient.node(value, branch, &mut path.clone());
                self.fits.borrow_mut().insert(pair, fit.clone());
                fit
            });
            match fit {
                // A lenient walk has walked the branch already: walking it again at each
                // nested `anyOf` would double the work per level.
                Ok(()) if self.lenient => return Ok(()),
                Ok(()) => return self.node(value, branch, &mut path.clone()),
                Err(misfit) => misfits.push(misfit),
            }
        }
        // A branch that got past its tag (or its type) says what is wrong with the
        // value; when every branch refused the tag or the string, one error lists every
        // variant.
        let variants = misfits
            .iter()
            .map(|(_, reason)| expected_variants(reason))
            .collect::<Option<Vec<_>>>()
            .map(|lists| lists.concat());
        match variants {
            Some(variants) if variants.len() > 1 => {
                let (at, _) = misfits.swap_remove(0);
                let found = value_at(value, &at[path.len()..]).unwrap_or(value);
                let variants: Vec<&Value> = variants.iter().collect();
                let reason = variant_error(found, &variants);
                Err((at, reason))
            }
            _ => {
                let past_the_tag = misfits
                    .iter()
                    .filter(|(_, reason)| expected_variants(reason).is_none())
                    // The deepest, the first of those.
                    .min_by_key(|(at, _)| std::cmp::Reverse(at.len()));
                match past_the_tag.or(misfits.first()) {
                    Some(misfit) => Err(misfit.clone()),
                    None => Ok(()),
                }
            }
        }
    }
}

/// `text` with its `%XX` escapes decoded; `None` where one is malformed.
fn percent_decoded(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// The value at `path` inside `value`.
fn value_at<'v>(value: &'v Value, path: &[Segment]) -> Option<&'v Value> {
    path.iter().try_fold(value, |value, segment| match segment {
        Segment::Key(key) => value.get(key),
        Segment::Index(index) => value.get(index),
    })
}

fn misfit(path: &Path, reason: String) -> Misfit {
    (path.clone(), reason)
}

/// Whether `value` is of the JSON Schema type `name`.
fn fits(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// A type as serde's errors name what they expected.
fn article(name: &str) -> &str {
    match name {
        "boolean" => "a boolean",
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "array" => "a sequence",
        "object" => "a map",
        other => other,
    }
}

/// The range `node` gives a value under `low` and `high` (`minimum` and `maximum` of the
/// integer types, `minLength` and `maxLength` of a `char`), as errors name it (`from 0 to
/// 255`), when `value` lies outside it.
fn outside(node: &Map<String, Value>, value: f64, low: &str, high: &str) -> Option<String> {
    let bound = |key: &str| node.get(key).and_then(Value::as_f64);
    let below = bound(low).is_some_and(|low| value < low);
    let above = bound(high).is_some_and(|high| value > high);
    let text = |key: &str| node.get(key).map_or("..".to_owned(), Value::to_string);
    (below || above).then(|| format!("from {} to {}", text(low), text(high)))
}

/// serde's "unknown field" error, with the keys the object takes.
fn unknown_field(key: &str, known: &[&str]) -> String {
    let names: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
    match names.as_slice() {
        [] => format!("unknown field `{key}`, there are no fields"),
        [one] => format!("unknown field `{key}`, expected {one}"),
        [first, second] => format!("unknown field `{key}`, expected {first} or {second}"),
        _ => format!(
            "unknown field `{key}`, expected one of {}",
            names.join(", ")
        ),
    }
}

/// serde's "unknown variant" error for a string, or an invalid value for anything else.
fn variant_error(found: &Value, allowed: &[&Value]) -> String {
    let names: Vec<String> = allowed
        .iter()
        .map(|value| match value {
            Value::String(name) => format!("`{name}`"),
            other => format!("`{other}`"),
        })
        .collect();
    let expected = match names.as_slice() {
        [one] => one.clone(),
        _ => format!("one of {}", names.join(", ")),
    };
    match found {
        Value::String(name) => format!("unknown variant `{name}`, expected {expected}"),
        other => format!("invalid value: {}, expected {expected}", Unexpected(other)),
    }
}

/// The variants an "unknown variant" reason lists, as values.
fn expected_variants(reason: &str) -> Option<Vec<Value>> {
    let (_, expected) = reason
        .strip_prefix("unknown variant `")?
        .rsplit_once("`, expected ")?;
    let expected = expected.strip_prefix("one of ").unwrap_or(expected);
    Some(
        expected
            .split(", ")
            .map(|name| Value::String(name.trim_matches('`').to_owned()))
            .collect(),
    )
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

/// Reads any JSON value as a `Value`, refusing a key twice in an object at any depth
/// (a `Value` would keep the last).
#[derive(Clone, Copy)]
pub(crate) struct UniqueKeys;

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
        let mut object = Map::new();
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn misfit(value: Value, schema: Value) -> Option<(String, String)> {
        check(&value, &schema)
            .err()
            .map(|(path, reason)| (crate::json_path::display(&path), reason))
    }

    fn closed(properties: Value) -> Value {
        let required: Vec<&String> = properties.as_object().unwrap().keys().collect();
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
    }

    #[test]
    fn an_untagged_enum_is_held_to_the_variant_serde_reads() {
        // serde reads the first variant that fits when unknown keys are ignored: `a`.
        let a = closed(json!({"x": {"type": "integer"}}));
        let b = closed(json!({"x": {"type": "integer"}, "y": {"type": "integer"}}));
        let schema = json!({"anyOf": [a, b]});
        assert_eq!(misfit(json!({"x": 1}), schema.clone()), None);
        assert_eq!(
            misfit(json!({"x": 1, "y": 2}), schema),
            Some(("".into(), "unknown field `y`, expected `x`".into()))
        );
    }

    #[test]
    fn a_left_out_nullable_key_picks_the_variant_serde_reads_and_is_then_required() {
        // serde reads `{"x": 1}` as `a`, with `note` as `None`: the call must send it.
        let a = closed(json!({"x": {"type": "integer"}, "note": {"type": ["string", "null"]}}));
        let b = closed(json!({"x": {"type": "integer"}}));
        let schema = json!({"anyOf": [a, b]});
        assert_eq!(
            misfit(json!({"x": 1}), schema),
            Some(("".into(), "missing field `note`".into()))
        );
    }

    #[test]
    fn every_variant_is_listed_when_no_tag_fits() {
        let close = closed(json!({"kind": {"type": "string", "const": "close"}}));
        let open = closed(json!({"kind": {"type": "string", "const": "open"}}));
        let schema = json!({"anyOf": [close, open]});
        assert_eq!(
            misfit(json!({"kind": "shut"}), schema),
            Some((
                "kind".into(),
                "unknown variant `shut`, expected one of `close`, `open`".into()
            ))
        );
    }

    #[test]
    fn a_map_is_held_to_the_schema_of_its_values() {
        let schema = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert_eq!(misfit(json!({"a": "b"}), schema.clone()), None);
        assert_eq!(
            misfit(json!({"a": 1}), schema),
            Some((
                "a".into(),
                "invalid type: integer `1`, expected a string".into()
            ))
        );
    }

    #[test]
    fn a_reference_to_the_root_is_followed() {
        let schema = json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["children"],
            "additionalProperties": false,
        });
        assert_eq!(
            misfit(json!({"children": [{"children": [], "zz": 1}]}), schema),
            Some((
                "children[0]".into(),
                "unknown field `zz`, expected `children`".into()
            ))
        );
    }
}
