//! Staged actions (`#[define_action]`): the free text their arguments may hold, and the
//! rules on what they take, as trait bounds checked at compile time.
//!
//! An action's call only stages it; its body runs after the turn's reply exists and
//! every `response_generated` hook has passed it. So its arguments hold no free text but
//! a bounded [`Note`] (what the model writes there cannot become a query, a path or a
//! template), and it is given nothing to read or decide with: its arguments, the turn's
//! [`Subscriber`], the redacting [`Audit`]
//! logger and its declared secrets.

use std::collections::VecDeque;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

use crate::context::{AgentName, Audit, Instance, Subscriber, TurnChannel};

/// Free text in an action's arguments, at most `MAX` characters (Unicode scalar values):
/// the one place an action takes words from the model.
///
/// ```
/// # use plugin_sdk::prelude::*;
/// #[derive(Deserialize, JsonSchema, ToolArgs)]
/// #[tool_args(action)]
/// struct LogCall {
///     /// What the customer asked for, in a sentence.
///     note: Note<280>,
/// }
/// ```
///
/// A longer text is refused with the call's other invalid arguments, naming the limit,
/// so that the model can shorten it. Its schema is a plain string (strict mode accepts
/// no `maxLength` everywhere): say the limit in the field's doc comment.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Note<const MAX: usize>(String);

/// The longest a [`Note`] may be declared: a note is a sentence or two, not a document.
pub const MAX_NOTE: usize = 4096;

impl<const MAX: usize> Note<MAX> {
    /// A note of `text`, or `None` when it is longer than `MAX` characters.
    pub fn new(text: impl Into<String>) -> Option<Self> {
        let text = text.into();
        (text.chars().count() <= MAX).then_some(Self(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<const MAX: usize> fmt::Debug for Note<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<const MAX: usize> fmt::Display for Note<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Note<MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let length = text.chars().count();
        if length > MAX {
            return Err(serde::de::Error::custom(format_args!(
                "a note of {length} characters, and at most {MAX} are allowed: shorten it"
            )));
        }
        Ok(Self(text))
    }
}

impl<const MAX: usize> JsonSchema for Note<MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Note".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string" })
    }
}

#[diagnostic::do_not_recommend]
impl<const MAX: usize> crate::StrictSchema for Note<MAX> {}

/// A type an action's arguments may hold: no free text but a [`Note`].
///
/// Implemented for booleans, numbers, `Note<MAX>`, `Option<T>`, `Vec<T>`, `VecDeque<T>`,
/// `Box<T>`, enums without fields that `#[derive(ToolArgs)]`, and the structs and enums
/// that `#[derive(ToolArgs)]` with `#[tool_args(action)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in the arguments of an action",
    label = "not allowed in an action's arguments",
    note = "an action's arguments hold enums, numbers and booleans; free text only in a `Note<MAX>` field, at most MAX characters: what the model writes must not reach the action unbounded",
    note = "a struct or enum of your own inside an action's arguments needs `#[tool_args(action)]` beside `#[derive(ToolArgs)]`, which checks its fields the same way"
)]
pub trait ActionField {
    /// Named by generated code as `<T as ActionField>::ASSERT`, so that an unmet bound
    /// is reported at the author's type.
    #[doc(hidden)]
    const ASSERT: () = ();
}

macro_rules! action_leaves {
    ($($ty:ty),* $(,)?) => { $(#[diagnostic::do_not_recommend] impl ActionField for $ty {})* };
}

action_leaves!(bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);

#[diagnostic::do_not_recommend]
impl<const MAX: usize> ActionField for Note<MAX> {
    // Evaluated where an action's arguments name the type: `MAX` from 1 to `MAX_NOTE`.
    const ASSERT: () = assert!(
        MAX >= 1 && MAX <= MAX_NOTE,
        "a `Note<MAX>` in an action's arguments holds 1 to 4096 characters: a note is a sentence or two, not a document"
    );
}
#[diagnostic::do_not_recommend]
impl<T: ActionField> ActionField for Option<T> {}
#[diagnostic::do_not_recommend]
impl<T: ActionField> ActionField for Vec<T> {}
#[diagnostic::do_not_recommend]
impl<T: ActionField> ActionField for VecDeque<T> {}
#[diagnostic::do_not_recommend]
impl<T: ActionField> ActionField for Box<T> {}

/// A parameter an action may take.
///
/// Implemented for its arguments (`#[derive(ToolArgs)]` with `#[tool_args(action)]`),
/// [`Subscriber`], `&Audit` and `#[derive(Secrets)]` structs.
#[diagnostic::on_unimplemented(
    message = "an action cannot take `{Self}`",
    label = "not an action's arguments, `Subscriber`, `&Audit`, secrets or where it runs",
    note = "if this is the action's arguments struct, add `#[tool_args(action)]` beside `#[derive(ToolArgs)]`: it checks that the fields hold no free text but a `Note<MAX>`",
    note = "otherwise: an action is given its validated arguments, the turn's `Subscriber`, `&Audit`, its `#[derive(Secrets)]` structs and where it runs (`Instance`, `AgentName`, `TurnChannel` or `Option<TurnChannel>`), and nothing else; it runs after the reply and the guardrails, to do what the reply promised, so it reads no model, knowledge base, conversation state or history, artifacts or context that could change what it does. To read before acting, split the work: a `#[define_tool]` that reads, and the action that writes"
)]
pub trait ActionParam {
    /// Named by generated code, so that the error stands at the parameter.
    #[doc(hidden)]
    const OK: () = ();
}

#[diagnostic::do_not_recommend]
impl ActionParam for Subscriber {}
#[diagnostic::do_not_recommend]
impl ActionParam for &Audit {}
#[diagnostic::do_not_recommend]
impl ActionParam for Instance {}
#[diagnostic::do_not_recommend]
impl ActionParam for AgentName {}
#[diagnostic::do_not_recommend]
impl ActionParam for TurnChannel {}
#[diagnostic::do_not_recommend]
impl ActionParam for Option<TurnChannel> {}

/// The API versions of actions and channels this SDK defines (`plugin! { api_version }`).
///
/// Version 0: actions follow the SDK's semver; the channel half ([`crate::channel`]) may
/// change in any minor release until a second adapter has been built against it.
/// (`#[define_action]`'s and `#[define_channel]`'s error for a `plugin!` without
/// `api_version` names version 0: plugin-sdk-macros' `plugin/expand.rs`.)
pub const API_VERSIONS: &[u32] = &[0];
