//! What generated code reaches, and nothing else. Not a public API: it changes with
//! the macros, which are pinned to this crate's exact version.

pub use inventory;
pub use schemars::{JsonSchema, Schema};
pub use serde;

pub use serde::de::DeserializeOwned;
use serde::de::DeserializeSeed;
use serde::Deserialize;

use crate::strict_check::UniqueKeys;
use crate::strict_read::Strict;

pub use crate::action::{ActionField, ActionParam};
pub use crate::channel::{Channel, ChannelDescriptor};
pub use crate::context::{
    FromSecret, KnowledgeNeed, OAuthProvider, Secret, SecretBundle, SecretKind, SecretSpec,
    StateBuilder,
};
pub use crate::future::BoxFuture;
pub use crate::hook::outcome::{
    ConversationStartReturn, MessageReceivedReturn, MutatingResponseGeneratedReturn,
    ResponseGeneratedReturn, ResponseSentReturn,
};
pub use crate::hook::registration::HookEvent;
pub use crate::hook::registration::{
    HookDescriptor, HookEntry, HookHandler, HookInput, HookParam, HookResult,
};
pub use crate::hook::{ConversationStart, MessageReceived, ResponseGenerated, ResponseSent};
pub use crate::localized::LocalizedText;
pub use crate::output::{IntoToolResult, ToolOutput};
pub use crate::param::{CallInput, Needs, ToolParam};
pub use crate::plugin::{Catalogue, Icon, PluginEntry, PluginManifest, System};
pub use crate::schema::{empty_object_schema, input_schema_for};
pub use crate::strict::{StrictSchema, ToolArgs};
pub use crate::tool::{SourceLocation, ToolAnnotations, ToolDescriptor, ToolEntry};
pub use crate::{ToolContext, ToolError};

/// Builds a `#[derive(Secrets)]` struct from the call's secrets.
pub fn secret_bundle<B: SecretBundle>(input: &CallInput<'_>) -> Result<B, ToolError> {
    crate::param::secret_bundle(input)
}

/// The knowledge a tool needs: its knowledge extractor's, if any. A second extractor is
/// refused at compile time by [`OneKnowledgeExtractor`], at its parameter.
pub const fn knowledge_need(candidates: &[Option<KnowledgeNeed>]) -> Option<KnowledgeNeed> {
    let mut i = 0;
    while i < candidates.len() {
        if candidates[i].is_some() {
            return candidates[i];
        }
        i += 1;
    }
    None
}

// The parameter rules, as bounds checked at each parameter's type (as axum's
// `debug_handler` does): `<ParamCount<N, IS> as Rule>::OK` holds unless the parameter is
// of the kind (`IS`) and `N` parameters of that kind came before it.

/// A parameter of a tool as generated code names it: a [`ToolParam`] whose error names
/// the parameter, without listing every extractor.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a tool",
    label = "not a tool parameter",
    note = "a tool takes one arguments struct with `#[derive(Deserialize, JsonSchema, ToolArgs)]` (a struct with named fields, never an enum or a scalar), and extractors: `&ToolContext`, a `#[derive(Secrets)]` struct, `&Audit`, `&State`, `&Artifacts`, `Knowledge<Read>` (`Write`, `Manage`) or `Option<Knowledge<..>>`, `Option<Model>`, `Subscriber`, `Conversation`, `Instance`, `AgentName`, `TurnChannel` or `Option<TurnChannel>`, `History`, `&OAuth`, `&Project`, `Shared<T>` (the plugin's state: `T` implements `plugin_sdk::shared::PluginState`), `&Abort`",
    note = "to give the model a single value, wrap it in a struct: `struct Args {{ value: T }}`"
)]
pub trait Param {
    /// [`ToolParam::ARGUMENTS`].
    const ARGUMENTS: bool;
    /// [`ToolParam::STRICT`].
    const STRICT: bool;
    /// [`ToolParam::SECRETS`].
    const SECRETS: &'static [SecretSpec];
    /// Whether this is a knowledge extractor.
    const IS_KNOWLEDGE: bool;
    /// Whether this is a plugin's state (`Shared<T>`).
    const IS_SHARED: bool;
    /// [`ToolParam::KNOWLEDGE`].
    const KNOWLEDGE: Option<KnowledgeNeed>;
    /// [`ToolParam::NEEDS`].
    const NEEDS: Needs;
    /// [`ToolParam::Extracted`].
    type Extracted<'a>;
    /// [`ToolParam::input_schema`].
    fn input_schema() -> Option<Schema>;
    /// [`ToolParam::check_arguments`].
    fn check_arguments(arguments: &str) -> Result<(), ToolError>;
    /// [`ToolParam::extract`].
    fn extract<'a>(input: &CallInput<'a>) -> Result<Self::Extracted<'a>, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: ToolParam> Param for T {
    const ARGUMENTS: bool = T::ARGUMENTS;
    const STRICT: bool = T::STRICT;
    const SECRETS: &'static [SecretSpec] = T::SECRETS;
    const IS_KNOWLEDGE: bool = T::KNOWLEDGE.is_some();
    const IS_SHARED: bool = T::NEEDS.state.is_some();
    const KNOWLEDGE: Option<KnowledgeNeed> = T::KNOWLEDGE;
    const NEEDS: Needs = T::NEEDS;
    type Extracted<'a> = T::Extracted<'a>;
    fn input_schema() -> Option<Schema> {
        T::input_schema()
    }
    fn check_arguments(arguments: &str) -> Result<(), ToolError> {
        T::check_arguments(arguments)
    }
    fn extract<'a>(input: &CallInput<'a>) -> Result<T::Extracted<'a>, ToolError> {
        T::extract(input)
    }
}

/// Extracts a parameter of a tool from its call with `extract`, its `Param::extract`:
/// generated code names that as a value, as it names the parameter's other items,
/// since rustc words an unmet bound at a called path otherwise ("consider borrowing"
/// at a value, the bound's own message at a call) and would report both.
pub fn extract_with<'a, T>(
    extract: fn(&CallInput<'a>) -> Result<T, ToolError>,
    input: &CallInput<'a>,
) -> Result<T, ToolError> {
    extract(input)
}

/// How many of `flags` are set: the parameters of one kind among some.
pub const fn count(flags: &[bool]) -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < flags.len() {
        count += flags[i] as usize;
        i += 1;
    }
    count
}

/// How many parameters of one kind came before this one (`BEFORE`), and whether this one
/// is of that kind (`IS`).
pub struct ParamCount<const BEFORE: usize, const IS: bool>;

macro_rules! at_most_one {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        pub trait $name {
            /// Named by generated code, so that the error stands at the parameter.
            const OK: () = ();
        }
        #[diagnostic::do_not_recommend]
        impl<const BEFORE: usize> $name for ParamCount<BEFORE, false> {}
        #[diagnostic::do_not_recommend]
        impl $name for ParamCount<0, true> {}
    };
}

at_most_one! {
    /// Holds unless a second arguments struct follows the first.
    #[diagnostic::on_unimplemented(
        message = "a tool takes one arguments struct, and this is a second one",
        label = "a second arguments struct",
        note = "put every field the model fills into one struct with `#[derive(Deserialize, JsonSchema, ToolArgs)]`; nest a struct as a field to group fields"
    )]
    OneArgumentsStruct
}

at_most_one! {
    /// Holds unless a second knowledge extractor follows the first.
    #[diagnostic::on_unimplemented(
        message = "a tool takes at most one knowledge extractor, and this is a second one",
        label = "a second knowledge extractor",
        note = "keep the one with the highest level the tool needs: `Knowledge<Write>` can also read, `Knowledge<Manage>` can also write"
    )]
    OneKnowledgeExtractor
}

at_most_one! {
    /// Holds unless a second `Shared<T>` follows the first: a plugin has one state.
    #[diagnostic::on_unimplemented(
        message = "a tool takes its plugin's state once, and this is a second `Shared<T>`",
        label = "a second `Shared<T>`",
        note = "a plugin has one state (`plugin! {{ state = T }}`), and its tools share only that one: keep one `Shared<T>`, and put whatever else the tools share inside `T`"
    )]
    OneSharedState
}

at_most_one! {
    /// Holds unless a hook's parameters take its event's payload a second time.
    #[diagnostic::on_unimplemented(
        message = "a hook takes its event's payload once, and this is a second time",
        label = "the payload again",
        note = "remove this parameter: the first one already holds the payload"
    )]
    OnePayload
}

/// Whether a tool's strict mode (`TOOL`) fits its arguments' (`ARGS`): `ParamStrict<true,
/// false>` is the strict tool whose arguments opted out.
pub struct ParamStrict<const TOOL: bool, const ARGS: bool>;

/// Holds unless the tool is strict and its arguments opted out of strict mode.
#[diagnostic::on_unimplemented(
    message = "these arguments opted out of strict mode, and the tool did not",
    label = "`#[tool_args(strict = false)]` on this type",
    note = "mark the tool `#[define_tool(strict = false)]` too, or remove `strict = false` from the arguments"
)]
pub trait StrictFits {
    /// Named by generated code, so that the error stands at the parameter.
    const OK: () = ();
}
#[diagnostic::do_not_recommend]
impl StrictFits for ParamStrict<true, true> {}
#[diagnostic::do_not_recommend]
impl<const ARGS: bool> StrictFits for ParamStrict<false, ARGS> {}

/// Boxes the future of a tool body; its `Send` bound is checked here, where generated
/// code spans the call at the tool's name.
pub fn tool_future<'a, F>(
    future: F,
    finish: fn(F::Output) -> Result<String, ToolError>,
) -> BoxFuture<'a, Result<String, ToolError>>
where
    F: std::future::Future + Send + 'a,
{
    Box::pin(async move { finish(future.await) })
}

/// The boxed future of a tool call that failed before its body ran.
pub fn tool_failed<'a>(error: ToolError) -> BoxFuture<'a, Result<String, ToolError>> {
    Box::pin(std::future::ready(Err(error)))
}

/// Boxes the future of a hook body; see [`tool_future`].
pub fn hook_future<'a, F, E: HookEvent>(
    future: F,
    finish: fn(F::Output) -> HookResult<E>,
) -> BoxFuture<'a, HookResult<E>>
where
    F: std::future::Future + Send + 'a,
{
    Box::pin(async move { finish(future.await) })
}

/// A hook parameter as generated code names it (see [`HookParam`]).
#[diagnostic::on_unimplemented(
    message = "a `{E}` hook cannot take `{Self}`",
    label = "not a parameter of a `{E}` hook",
    note = "a hook takes its event's payload by reference (`&{E}`), and extractors: `Subscriber`, `Conversation`, `&State` (not at `response_sent`: the turn is stored by then), a `#[derive(Secrets)]` struct, `Option<Model>`, `&Audit`, `&Abort`"
)]
pub trait HookParameter<E: HookEvent>: Sized {
    /// [`HookParam::NEEDS`].
    const NEEDS: Needs;
    /// [`HookParam::SECRETS`].
    const SECRETS: &'static [SecretSpec];
    /// [`HookParam::IS_PAYLOAD`].
    const IS_PAYLOAD: bool;
    /// [`HookParam::Extracted`].
    type Extracted<'a>;
    /// [`HookParam::extract`].
    fn extract<'a>(input: HookInput<'a, E>) -> Result<Self::Extracted<'a>, String>;
}

#[diagnostic::do_not_recommend]
impl<E: HookEvent, T: HookParam<E>> HookParameter<E> for T {
    const NEEDS: Needs = T::NEEDS;
    const SECRETS: &'static [SecretSpec] = T::SECRETS;
    const IS_PAYLOAD: bool = T::IS_PAYLOAD;
    type Extracted<'a> = T::Extracted<'a>;
    fn extract<'a>(input: HookInput<'a, E>) -> Result<T::Extracted<'a>, String> {
        T::extract(input)
    }
}

/// Extracts a parameter of a hook from its run with `extract`, its
/// `HookParameter::extract` (named as a value: see `extract_with`).
pub fn extract_hook_param_with<'a, E, T>(
    extract: fn(HookInput<'a, E>) -> Result<T, String>,
    input: HookInput<'a, E>,
) -> Result<T, String> {
    extract(input)
}

/// Builds a `#[derive(Secrets)]` struct from a hook run's secrets.
pub fn hook_secret_bundle<E, B: SecretBundle>(input: HookInput<'_, E>) -> Result<B, String> {
    crate::hook::registration::hook_secret_bundle(input)
}

/// The boxed future of a hook run whose parameters could not be built.
pub fn hook_failed<'a, E: HookEvent>(error: String) -> BoxFuture<'a, HookResult<E>> {
    Box::pin(std::future::ready(Err(error)))
}

/// A field of a `#[derive(Secrets)]` struct as generated code names it (see
/// [`FromSecret`]).
#[diagnostic::on_unimplemented(
    message = "a `#[derive(Secrets)]` field must be a `Secret`, not `{Self}`",
    label = "not a `Secret`",
    note = "each field is one key the agent configures: write `field: Secret`, and read the value with `.expose()`"
)]
pub trait SecretField: Sized {
    /// [`FromSecret::from_secret`].
    fn from_secret(secret: Secret) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T: FromSecret> SecretField for T {
    fn from_secret(secret: Secret) -> Self {
        T::from_secret(secret)
    }
}

// Names one crate's macros already show, refused at compile time.
//
// `plugin!` defines `__plugin_sdk_plugin::Names` at the crate root; each tool and hook
// implements a trait named after the mistake for it, with the hash of its name as the
// const argument, so a second one with that name is "conflicting implementations". A
// crate without `plugin!` gets a stand-in type per tool (see `plugin::lookup` in the
// macros), so that only the missing `plugin!` is reported.

/// Implemented for the crate's plugin once per tool name: a second implementation is
/// a second tool of that name in the crate.
pub trait RenameOneOfTheToolsOfThisCrateThatShareThisName<const NAME_HASH: u128> {}

/// Implemented for the crate's plugin once per channel name: a second implementation is
/// a second channel of that name in the crate.
pub trait RenameOneOfTheChannelsOfThisCrateThatShareThisName<const NAME_HASH: u128> {}

/// Implemented for the crate's plugin once per hook name: a second implementation is
/// a second hook of that name in the crate.
pub trait RenameOneOfTheHooksOfThisCrateThatShareThisName<const NAME_HASH: u128> {}

/// What `plugin!` declares that its crate's items check at compile time: the namespace,
/// for the wire-name check of each tool; the API version, which an action or a channel
/// needs.
pub trait PluginNames {
    /// `plugin! { namespace = ... }`, or `""` in a crate without `plugin!`.
    const NAMESPACE: &'static str;
    /// Whether `plugin!` declares `api_version`; `true` in a crate without `plugin!`,
    /// where only the missing `plugin!` is reported.
    const DECLARES_API_VERSION: bool;
}

/// The longest wire name (`<namespace>__<name>`) every provider accepts (OpenAI,
/// Anthropic, Mistral and Gemini allow 64 characters, MCP 128).
pub const MAX_WIRE_NAME_LEN: usize = 64;

/// Whether the wire name of a tool named with `name_len` characters fits the namespace.
pub const fn wire_name_fits<P: PluginNames>(name_len: usize) -> bool {
    P::NAMESPACE.len() + 2 + name_len <= MAX_WIRE_NAME_LEN
}

/// Runs the future of a tool or hook body that has no `.await`, which is ready on its
/// first poll.
pub fn run_ready<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(output) => output,
        // The macros emit this call only for bodies without a suspension point.
        std::task::Poll::Pending => {
            panic!(
                "a body without `.await` suspended: a bug in `#[define_tool]` or `#[define_hook]`"
            )
        }
    }
}

/// Deserializes a tool's arguments with the type's own `Deserialize` (a tool that opted
/// out of strict mode), as a model-readable error on failure.
pub fn deserialize_arguments<T: DeserializeOwned>(arguments: &str) -> Result<T, ToolError> {
    serde_json::from_str(arguments).map_err(|error| arguments_error(arguments, error))
}

/// Deserializes a strict tool's arguments as the schema states them, through the type's
/// own `Deserialize` (see `strict_read`), as a model-readable error on failure. Where a
/// part was read without naming its keys, the arguments are checked against the schema.
pub fn deserialize_strict_arguments<T: StrictSchema>(arguments: &str) -> Result<T, ToolError> {
    let unchecked = std::cell::Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_str(arguments);
    let read = T::deserialize(Strict::new(&mut deserializer, &unchecked))
        .and_then(|value| deserializer.end().map(|()| value));
    // Only the reading is generic: a tool costs no copy of what follows it.
    let schema = unchecked
        .get()
        .then_some(input_schema_for::<T> as fn(bool) -> Schema);
    match read {
        Ok(value) => match schema {
            Some(schema) => check_against_schema(arguments, &schema(true)).map(|()| value),
            None => Ok(value),
        },
        Err(error) => Err(refused(arguments, error, schema)),
    }
}

/// Why strict `arguments` did not read: where a part was read without naming its keys,
/// the misfit the check against the `schema` finds, in preference to serde's `error`
/// (the check has the path inside a buffered value).
#[cold]
fn refused(
    arguments: &str,
    error: serde_json::Error,
    schema: Option<fn(bool) -> Schema>,
) -> ToolError {
    let misfit = schema.and_then(|schema| check_against_schema(arguments, &schema(true)).err());
    misfit.unwrap_or_else(|| arguments_error(arguments, error))
}

/// Checks `arguments` against `schema` (see `strict_check`), naming the first misfit.
#[cold]
fn check_against_schema(arguments: &str, schema: &Schema) -> Result<(), ToolError> {
    let mut deserializer = serde_json::Deserializer::from_str(arguments);
    let value = UniqueKeys
        .deserialize(&mut deserializer)
        .map_err(|error| arguments_error(arguments, error))?;
    let (path, reason) = match crate::strict_check::check(&value, schema.as_value()) {
        Ok(()) => return Ok(()),
        Err(misfit) => misfit,
    };
    Err(ToolError::invalid_arguments(arguments_message(
        &path, &reason,
    )))
}

/// Explains why `arguments` did not deserialize, naming the field (`to.zip`) found at
/// the position serde_json reports. Not generic: a tool's error path costs no code per
/// arguments type.
#[cold]
fn arguments_error(arguments: &str, error: serde_json::Error) -> ToolError {
    // serde_json reports some shapes it did not expect (`{}` for an enum) as syntax.
    let valid_json = || serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok();
    if error.is_eof() || (error.is_syntax() && !valid_json()) {
        return ToolError::invalid_arguments(format!("the arguments are not valid JSON: {error}"));
    }
    use crate::json_path::{char_at, key_after, key_error, path_at, unknown_key};
    // The model addresses fields, not lines and columns of its own JSON.
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let mut reason = full.strip_suffix(&position).unwrap_or(&full).to_owned();
    let mut path = path_at(arguments, error.line(), error.column());
    if unknown_key(&reason).is_some() {
        // Raised where the key was read: the path ends with it.
        path.pop();
    } else if reason.starts_with("invalid type: array,")
        && char_at(arguments, error.line(), error.column()) == Some(b'[')
    {
        // A struct refused the array it was sent (`strict_read`), once serde_json had
        // entered it: the path is of its first element. (An empty array serde_json has
        // left already, and the path is the array's.)
        path.pop();
    } else if error.is_syntax() {
        if let Some((object, key)) = key_after(arguments, error.line(), error.column()) {
            let reason = format!("unknown field `{key}`, expected the variant's key alone");
            let message = key_error(&object, &reason).expect("an unknown key's reason");
            return ToolError::invalid_arguments(message);
        }
        reason = format!("not the shape the schema gives here ({reason})");
    }
    ToolError::invalid_arguments(arguments_message(&path, &reason))
}

/// The message for an error `reason` at `path` (a key's error: at the key's object).
fn arguments_message(path: &crate::json_path::Path, reason: &str) -> String {
    use crate::json_path::{display, key_error};
    if let Some(message) = key_error(path, reason) {
        message
    } else if path.is_empty() {
        format!("invalid arguments: {reason}")
    } else {
        format!("invalid arguments: `{}`: {reason}", display(path))
    }
}

/// Accepts the arguments of a tool that takes none: `{}` or `null`.
pub fn expect_no_arguments(arguments: &str) -> Result<(), ToolError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NoArguments {}
    deserialize_arguments::<Option<NoArguments>>(arguments).map(drop)
}

/// Checks whether example arguments (JSON text) fit one parameter.
pub type ArgumentsCheck = fn(&str) -> Result<(), ToolError>;

/// Checks arguments (an `example = ...` in generated tests, or an action's call when it
/// is staged) against a tool's parameters.
pub fn check_arguments(
    example: &str,
    arguments: usize,
    checks: &[ArgumentsCheck],
) -> Result<(), ToolError> {
    if arguments == 0 {
        return expect_no_arguments(example);
    }
    checks.iter().try_for_each(|check| check(example))
}

/// The schema of the tool's arguments parameter, or the empty object without one.
pub fn first_input_schema(candidates: &[fn() -> Option<Schema>]) -> Schema {
    candidates
        .iter()
        .find_map(|candidate| candidate())
        .unwrap_or_else(empty_object_schema)
}

// Finding the crate's plugin from a tool, wherever the tool is defined in the crate.
//
// `plugin!` defines, at the crate root, a trait implemented for `PluginProbe` whose
// method answers `Declared`. A tool calls that method through `use crate::*`; when the
// crate has no `plugin!`, method resolution falls back (by autoref) to `NoPluginYet`,
// whose answer fails the `DeclaredPlugin` bound with a message saying to add one.

/// The state a `plugin!` declares, implemented where its `state = T` was written so that
/// `T`'s path resolves there.
pub trait DeclaredState {
    /// `plugin! { state = T }`'s builder.
    const STATE: &'static StateBuilder;
}

/// The receiver of the plugin look-up.
pub struct PluginProbe;

/// What the look-up answers when the crate has a `plugin!`.
pub struct Declared(pub &'static PluginManifest);

/// What the look-up answers when it does not.
pub struct NoPlugin;

/// The fallback look-up, reached only when the crate root has no `plugin!`.
pub trait NoPluginYet {
    /// Answers that there is no plugin.
    fn __plugin_sdk_plugin(&self) -> NoPlugin {
        NoPlugin
    }
}

impl NoPluginYet for &PluginProbe {}

/// Proof that the crate declared its plugin.
#[diagnostic::on_unimplemented(
    message = "this crate defines a tool or hook but has no `plugin_sdk::plugin! {{ ... }}`",
    label = "this belongs to the crate's plugin, which is not declared",
    note = "add `plugin_sdk::plugin! {{ namespace = \"...\", engine = \">=0.1\" }}` once, at the crate root (src/lib.rs), above the modules that define tools and hooks"
)]
pub trait DeclaredPlugin {
    /// The crate's manifest.
    fn manifest(self) -> &'static PluginManifest;
}

impl DeclaredPlugin for Declared {
    fn manifest(self) -> &'static PluginManifest {
        self.0
    }
}

/// The manifest that the look-up found.
pub fn declared_plugin<D: DeclaredPlugin>(found: D) -> &'static PluginManifest {
    found.manifest()
}

/// Whether `module_path` (from `module_path!()`) names a crate's root module.
pub const fn is_crate_root(module_path: &str) -> bool {
    let bytes = module_path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' {
            return false;
        }
        i += 1;
    }
    true
}
