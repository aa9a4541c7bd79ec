//! What generated code reaches, and nothing else. Not a public API: it changes with
//! the macros, which are pinned to this crate's exact version.

pub use inventory;
pub use schemars::{JsonSchema, Schema};

pub use serde::de::DeserializeOwned;
use serde::Deserialize;

pub use crate::context::{FromSecret, KnowledgeNeed, Secret, SecretBundle, SecretSpec};
pub use crate::hook::outcome::{
    ConversationStartReturn, MessageReceivedReturn, MutatingResponseGeneratedReturn,
    ResponseGeneratedReturn, ResponseSentReturn,
};
pub use crate::hook::registration::{
    HookDescriptor, HookEntry, HookHandler, HookInput, HookParam, HookResult,
};
pub use crate::hook::{ConversationStart, MessageReceived, ResponseGenerated, ResponseSent};
pub use crate::localized::LocalizedText;
pub use crate::output::{IntoToolResult, ToolOutput};
pub use crate::param::{CallInput, Needs, ToolParam};
pub use crate::plugin::{PluginEntry, PluginManifest};
pub use crate::schema::{empty_object_schema, input_schema_for};
pub use crate::strict::{StrictSchema, ToolArgs};
pub use crate::tool::{BoxFuture, SourceLocation, ToolAnnotations, ToolDescriptor, ToolEntry};
pub use crate::{ToolContext, ToolError};

/// Builds a `#[derive(Secrets)]` struct from the call's secrets.
pub fn secret_bundle<B: SecretBundle>(input: &CallInput<'_>) -> Result<B, ToolError> {
    crate::context::secret_bundle(input)
}

/// The knowledge a tool needs: its one knowledge extractor's, if any.
pub const fn knowledge_need(candidates: &[Option<KnowledgeNeed>]) -> Option<KnowledgeNeed> {
    let mut found = None;
    let mut i = 0;
    while i < candidates.len() {
        if candidates[i].is_some() {
            if found.is_some() {
                panic!("a tool takes at most one knowledge extractor: keep the one with the highest level it needs (`Knowledge<Write>` can also read)");
            }
            found = candidates[i];
        }
        i += 1;
    }
    found
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

/// Deserializes a tool's arguments, as a model-readable error on failure.
pub fn deserialize_arguments<T: DeserializeOwned>(arguments: &str) -> Result<T, ToolError> {
    serde_json::from_str(arguments).map_err(|error| arguments_error(arguments, error))
}

/// Explains why `arguments` did not deserialize, naming the field (`to.zip`) found at
/// the position serde_json reports. Not generic: a tool's error path costs no code per
/// arguments type.
#[cold]
fn arguments_error(arguments: &str, error: serde_json::Error) -> ToolError {
    if error.is_syntax() || error.is_eof() {
        return ToolError::invalid_arguments(format!("the arguments are not valid JSON: {error}"));
    }
    let path = crate::json_path::path_at(arguments, error.line(), error.column());
    // The model addresses fields, not lines and columns of its own JSON.
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let reason = full.strip_suffix(&position).unwrap_or(&full);
    let message = if path.is_empty() {
        format!("invalid arguments: {reason}")
    } else {
        format!("invalid arguments: `{path}`: {reason}")
    };
    ToolError::invalid_arguments(message)
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

/// Checks one `example = ...` of a tool against its parameters (for generated tests).
pub fn check_example(
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
