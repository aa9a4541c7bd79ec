//! Strict mode as trait bounds: what may appear in a tool's arguments.
//!
//! `#[derive(ToolArgs)]` asks, for every field, that its type implements
//! [`StrictSchema`]. The trait is implemented only for types whose schema is closed,
//! fully required and free of `format`s, so a violation anywhere (nested, behind a type
//! alias, in a generic argument) is a compile error at the offending type.

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// A type whose JSON Schema every provider accepts in strict mode.
///
/// Implemented for strings, booleans, numbers, `Option<T>`, `Vec<T>`, `VecDeque<T>`,
/// `Box<T>`, and the types that `#[derive(ToolArgs)]`.
///
/// Dispatch reads a strict type through its own `Deserialize`, refusing a key its struct
/// does not name and every key it names that was left out, at any depth. A type that
/// implements it by hand (with a hand-written `JsonSchema`) and reads a map is checked
/// against its schema instead.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in the arguments of a strict tool",
    label = "not allowed in strict tool arguments; your own struct or enum? add `ToolArgs` to its `#[derive(...)]`",
    note = "allowed: String, bool, integers, floats, Option<T>, Vec<T>, Box<T>, and your own structs and enums with `#[derive(Deserialize, JsonSchema, ToolArgs)]`",
    note = "maps (HashMap, BTreeMap) are open objects: use a struct with the known keys, or a `Vec` of a struct with `key` and `value` fields",
    note = "serde_json::Value and types whose schema has a string `format` (Uuid, Url, DateTime, IpAddr, ...) are not: take a `String` and parse or validate it in the tool body"
)]
pub trait StrictSchema: JsonSchema + DeserializeOwned {
    /// Named by generated code as `<T as StrictSchema>::ASSERT`, so that an unmet bound
    /// is reported at the author's type and nowhere else.
    #[doc(hidden)]
    const ASSERT: () = ();
}

/// The arguments of a tool: a struct with named fields whose schema is strict.
///
/// Derive it with `#[derive(Deserialize, JsonSchema, ToolArgs)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool arguments struct",
    note = "the arguments of a tool are one struct with named fields and `#[derive(Deserialize, JsonSchema, ToolArgs)]`"
)]
pub trait ToolArgs: StrictSchema + DeserializeOwned {}

macro_rules! strict_leaves {
    // Left out of rustc's "the following other types implement" list: the note says them.
    ($($ty:ty),* $(,)?) => { $(#[diagnostic::do_not_recommend] impl StrictSchema for $ty {})* };
}

strict_leaves!(String, bool, char, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);

// A handle is a plain string in the schema: tools pass it back as the model gave it.
#[diagnostic::do_not_recommend]
impl StrictSchema for crate::context::ArtifactHandle {}

#[diagnostic::do_not_recommend]
impl<T: StrictSchema> StrictSchema for Option<T> {}
#[diagnostic::do_not_recommend]
impl<T: StrictSchema> StrictSchema for Vec<T> {}
#[diagnostic::do_not_recommend]
impl<T: StrictSchema> StrictSchema for VecDeque<T> {}
#[diagnostic::do_not_recommend]
impl<T: StrictSchema> StrictSchema for Box<T> {}
