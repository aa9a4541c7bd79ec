//! One external tool: what its file declared, checked, and the runner that calls it.

use std::path::PathBuf;
use std::sync::Arc;

use plugin_sdk::engine::schema::check_strict;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::wire::NameRules;
use crate::{gemini, wire};

/// Why an external tool's declaration is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidTool {
    /// The namespace is not kebab-case, or too long.
    #[error("`{0}` is not a valid namespace: use kebab-case (lowercase words joined by `-`, starting with a letter), at most 32 characters, such as `my-tools`")]
    Namespace(String),
    /// The namespace is one the engine keeps.
    #[error("the namespace `{0}` is kept for the engine (with {list}): choose another", list = crate::RESERVED_NAMESPACES.join(", "))]
    ReservedNamespace(String),
    /// The tool's name is empty or holds a `:`.
    #[error("the tool name `{0}` is not valid: use letters, digits, `_` and `-`")]
    Name(String),
    /// A provider would refuse the tool's wire name.
    #[error("the tool `{name}` would be `{wire_name}` on the wire, which {} refuses: use {} and at most {} bytes with the namespace", rules.surface, rules.alphabet, rules.max_len)]
    WireName {
        /// The tool's name.
        name: String,
        /// Its wire name.
        wire_name: String,
        /// The rules of the surface that refuses it.
        rules: &'static NameRules,
    },
    /// The input schema is not an object schema.
    #[error("the input schema of `{0}` must be an object schema (`\"type\": \"object\"`)")]
    NotAnObject(String),
}

/// What an extension file declares of one tool, before the engine checks it.
#[derive(Clone, Debug)]
pub struct ExternalToolSpec {
    /// Its namespace: the file's (kebab-case, not a linked plugin's nor a reserved one).
    pub namespace: String,
    /// Its name within the namespace.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A short title for people (MCP's `title`); the name when absent.
    pub summary: Option<String>,
    /// A grouping for listings.
    pub category: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// Whether its file opted in to know the conversation of each call
    /// (`"context": ["conversation"]`): its runner is then given the conversation's id,
    /// and never anything else of the turn. Without the opt-in it is given nothing.
    pub knows_conversation: bool,
}

/// Why a call of an external tool produced no result, as its runner reports it; the
/// engine turns it into the same [`CallError`](crate::CallError) a linked tool's gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The arguments do not fit the tool's schema (nothing ran).
    InvalidArguments(String),
    /// The tool ran and failed: the message says how, for the model.
    Failed(String),
    /// The tool ran and its output is not what the engine can pass on (not JSON, too
    /// large).
    Output(String),
    /// The tool passed its own timeout (shorter than the call's) and was stopped.
    TimedOut(String),
}

/// Calls one external tool. A runner's future must clean up when dropped (a call past
/// its deadline, or cancelled, is dropped): kill what it started, tell the server.
pub trait Runner: Send + Sync + 'static {
    /// Runs the tool with `arguments` (JSON text, within the engine's size limit) and
    /// gives its output as JSON text. `conversation` is the id of the call's
    /// conversation, given only to a tool that opted in
    /// ([`ExternalToolSpec::knows_conversation`]) and only for a call in one.
    fn run(
        &self,
        arguments: &str,
        conversation: Option<&str>,
    ) -> futures::future::BoxFuture<'static, Result<String, RunError>>;
}

/// A tool declared outside the image (by an extension file, or a dev session), checked:
/// its ids, its schema's text, the strict and Gemini verdicts.
pub struct Declared {
    spec: ExternalToolSpec,
    id: String,
    wire_name: String,
    input_json: Box<RawValue>,
    /// Why the schema is not strict-compatible (it is then rendered `strict: false`,
    /// not rewritten).
    not_strict: Option<String>,
    /// Why Gemini cannot take the schema (the tool is then left out of Gemini's catalog).
    gemini_problem: Option<String>,
}

impl Declared {
    /// Checks `spec`: its names must suit every surface and its schema must be an object
    /// schema. The checks against what is linked and the other tools are made where the
    /// tool is installed.
    pub fn check(spec: ExternalToolSpec) -> Result<Self, InvalidTool> {
        check_namespace(&spec.namespace)?;
        let wire_name = wire::wire_name(&spec.namespace, &spec.name);
        if spec.name.is_empty() || spec.name.contains(':') {
            return Err(InvalidTool::Name(spec.name));
        }
        if let Some(rules) = wire::SURFACES
            .iter()
            .find(|rules| !rules.accepts(&wire_name))
        {
            return Err(InvalidTool::WireName {
                name: spec.name,
                wire_name,
                rules,
            });
        }
        if spec.input_schema.get("type") != Some(&Value::from("object")) {
            return Err(InvalidTool::NotAnObject(spec.name));
        }
        let not_strict = check_strict(&spec.input_schema)
            .first()
            .map(ToString::to_string);
        let gemini_problem = gemini::problem(&spec.input_schema);
        let input_json = serde_json::value::to_raw_value(&spec.input_schema)
            .expect("a JSON value always serializes");
        Ok(Self {
            id: format!("{}:{}", spec.namespace, spec.name),
            wire_name,
            input_json,
            not_strict,
            gemini_problem,
            spec,
        })
    }

    /// The canonical id, `<namespace>:<name>`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The name every catalog gives it, `<namespace>__<name>`.
    pub fn wire_name(&self) -> &str {
        &self.wire_name
    }

    /// Its namespace.
    pub fn namespace(&self) -> &str {
        &self.spec.namespace
    }

    /// Its name within the namespace.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// What it does, for the model.
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// Its title for people.
    pub fn summary(&self) -> &str {
        self.spec.summary.as_deref().unwrap_or(&self.spec.name)
    }

    /// Its grouping for listings, if it has one.
    pub fn category(&self) -> Option<&str> {
        self.spec.category.as_deref()
    }

    /// The JSON Schema of its arguments, as declared.
    pub fn input_schema(&self) -> &Value {
        &self.spec.input_schema
    }

    /// Why its schema is not strict-compatible, if it is not: catalogs then render it
    /// with `strict: false`.
    pub fn not_strict(&self) -> Option<&str> {
        self.not_strict.as_deref()
    }

    /// Why Gemini cannot take its schema, if it cannot: Gemini's catalog leaves it out.
    pub fn gemini_problem(&self) -> Option<&str> {
        self.gemini_problem.as_deref()
    }

    pub(crate) fn input_json(&self) -> &RawValue {
        &self.input_json
    }

    /// What a catalog shows of it.
    pub(crate) fn catalog_entry(&self) -> crate::catalog::ExternalEntry<'_> {
        crate::catalog::ExternalEntry {
            wire_name: self.wire_name(),
            description: self.description(),
            summary: self.summary(),
            input: self.input_json(),
            input_schema: self.input_schema(),
            strict: self.not_strict().is_none(),
        }
    }
}

/// An external tool: its checked declaration, the file that declares it, and the runner
/// that calls it.
pub struct ExternalTool {
    declared: Declared,
    /// The file that declares it.
    source: PathBuf,
    runner: Arc<dyn Runner>,
}

impl std::ops::Deref for ExternalTool {
    type Target = Declared;

    fn deref(&self) -> &Declared {
        &self.declared
    }
}

impl ExternalTool {
    /// Checks `spec` ([`Declared::check`]), declared by the file `source`.
    pub fn new(
        spec: ExternalToolSpec,
        source: PathBuf,
        runner: Arc<dyn Runner>,
    ) -> Result<Self, InvalidTool> {
        Ok(Self {
            declared: Declared::check(spec)?,
            source,
            runner,
        })
    }

    /// Whether its runner is given the conversation of each call.
    pub fn knows_conversation(&self) -> bool {
        self.declared.spec.knows_conversation
    }

    /// The file that declares it.
    pub fn source(&self) -> &std::path::Path {
        &self.source
    }

    pub(crate) fn runner(&self) -> &Arc<dyn Runner> {
        &self.runner
    }
}

/// A namespace an external file may take: kebab-case (so that the first `__` of a wire
/// name ends it), at most 32 characters, none of the engine's own.
fn check_namespace(namespace: &str) -> Result<(), InvalidTool> {
    let words_ok = namespace.split('-').all(|word| {
        !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    if !(words_ok
        && namespace.starts_with(|c: char| c.is_ascii_lowercase())
        && namespace.len() <= 32)
    {
        return Err(InvalidTool::Namespace(namespace.to_owned()));
    }
    if crate::RESERVED_NAMESPACES.contains(&namespace) {
        return Err(InvalidTool::ReservedNamespace(namespace.to_owned()));
    }
    Ok(())
}
