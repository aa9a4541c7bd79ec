//! Drop-in providers: one JSON file per model provider in the providers directory
//! (`providers.d/` beside the configuration), which a loader (`engine-extensions`) reads
//! at start-up ([`EngineBuilder::provider_files`](crate::EngineBuilder::provider_files))
//! and again whenever the directory changes
//! ([`Engine::install_providers`](crate::Engine::install_providers)); each is usable by an
//! agent's `turn.provider` from its next turn.
//!
//! A file is read like a tool file: strictly (an unknown key is an error), one object
//! whose `name` is the provider's and whose other keys are a `[providers.NAME]` table's;
//! the base URL is `https://`, or `http://` on a loopback address. A file that does not
//! pass, or whose name a configured provider or an earlier file (in path order) has, is
//! skipped with its error, and the others are used.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::sync::Arc;

use plugin_sdk::engine::{linked_hooks, linked_tools, Redact as _, RedactValues};
use serde::Serialize;
use serde_json::Value;

use super::{OpenProvider, Provider};
use crate::config::{provider_problems, AgentConfig, EngineConfig, ProviderConfig};

/// The longest provider name.
const MAX_NAME_CHARS: usize = 64;

/// One file of the providers directory, read, with its state.
#[derive(Clone, Debug, Serialize)]
pub struct ProviderFile {
    /// Where it is.
    pub path: PathBuf,
    /// The provider's name, when the file gave one.
    pub name: Option<String>,
    /// `ok` (agents may use it), `degraded` (an agent that names it cannot use it, and
    /// the error says why) or `error` (skipped).
    pub state: &'static str,
    /// Why it is skipped, or which agents cannot use it.
    pub error: Option<String>,
    /// The agents whose turns use it now.
    pub used_by: Vec<String>,
    /// What it describes, or why it does not parse: kept, so that a file skipped for a
    /// clash is used again once the clash is gone (a reload renamed the configured one).
    #[serde(skip)]
    parsed: Result<ProviderConfig, String>,
    /// Whether agents may use it now: it parses and nothing skipped it.
    #[serde(skip)]
    usable: bool,
}

impl ProviderFile {
    /// The file at `path`, whose text is `text` (or why it could not be read), parsed.
    pub fn new(path: PathBuf, text: Result<String, String>) -> Self {
        let parsed = match text {
            Ok(text) => parse(&text),
            Err(error) => Err((None, error)),
        };
        let (name, parsed) = match parsed {
            Ok((name, provider)) => (Some(name), Ok(provider)),
            Err((name, error)) => (name, Err(error)),
        };
        let mut file = Self {
            path,
            name,
            state: "ok",
            error: None,
            used_by: Vec::new(),
            parsed,
            usable: false,
        };
        file.reset();
        file
    }

    /// Its state as parsing left it, before any check against the configuration.
    fn reset(&mut self) {
        self.used_by.clear();
        match &self.parsed {
            Ok(_) => {
                self.state = "ok";
                self.error = None;
                self.usable = true;
            }
            Err(error) => {
                let error = error.clone();
                self.skip(error);
            }
        }
    }

    /// Skips it, saying why: no agent uses it.
    pub(crate) fn skip(&mut self, error: String) {
        self.state = "error";
        self.error = Some(error);
        self.usable = false;
        self.used_by.clear();
    }

    /// Its name and provider, when it offers one.
    fn offered(&self) -> Option<(&str, &ProviderConfig)> {
        if !self.usable {
            return None;
        }
        Some((self.name.as_deref()?, self.parsed.as_ref().ok()?))
    }
}

/// `files` checked against the providers `config` and the builder (`given`) name, and
/// against one another.
pub(crate) fn checked(
    mut files: Vec<ProviderFile>,
    config: &EngineConfig,
    given: &BTreeSet<String>,
) -> Vec<ProviderFile> {
    files.iter_mut().for_each(ProviderFile::reset);
    refuse_clashes(&mut files, config, given);
    files
}

/// Skips a file whose provider a configured (or given) provider has, or an earlier file.
fn refuse_clashes(files: &mut [ProviderFile], config: &EngineConfig, given: &BTreeSet<String>) {
    let mut taken = BTreeSet::new();
    for file in files {
        let Some((name, _)) = file.offered() else {
            continue;
        };
        let name = name.to_owned();
        if config.providers.contains_key(&name) || given.contains(&name) {
            file.skip(format!(
                "the provider `{name}` is configured already (`[providers.{name}]`, or given to the engine's builder): rename this one"
            ));
        } else if !taken.insert(name.clone()) {
            file.skip(format!(
                "the provider `{name}` is offered by a file before this one (in path order): rename this one, or remove one"
            ));
        }
    }
}

/// The providers the valid files offer, by name: what the start-up checks take as
/// configured.
pub(crate) fn offered(files: &[ProviderFile]) -> BTreeMap<String, ProviderConfig> {
    files
        .iter()
        .filter_map(ProviderFile::offered)
        .map(|(name, provider)| (name.to_owned(), provider.clone()))
        .collect()
}

/// The drop-in providers as the agents of a configuration use them: each file with its
/// state, and each agent's provider, made with the agent's key.
#[derive(Default)]
pub(crate) struct DropIns {
    files: Vec<ProviderFile>,
    by_agent: BTreeMap<String, Arc<dyn Provider>>,
}

impl DropIns {
    /// `files` as the agents of `config` use them: an agent whose `turn.provider` no
    /// configured provider has, and a valid file offers, gets the file's provider, made
    /// by `open` with its key. An agent that cannot use it ([`key_problem`], or the
    /// provider cannot be made: its key is not a valid header, the image links no
    /// provider backend) gets none, and the file says why (`degraded`); the other agents
    /// naming it still use it. Every error is redacted by `redact` (a backend's message
    /// may quote a key).
    pub(crate) fn equip(
        mut files: Vec<ProviderFile>,
        config: &EngineConfig,
        open: Option<OpenProvider>,
        redact: &RedactValues,
    ) -> Self {
        let mut by_agent = BTreeMap::new();
        for (agent_name, agent) in &config.agents {
            let Some(turn) = &agent.turn else { continue };
            let Some(file) = files.iter_mut().find(|file| {
                file.offered()
                    .is_some_and(|(name, _)| name == turn.provider)
            }) else {
                continue;
            };
            let provider = file.offered().expect("found offered").1;
            let made = match (
                key_problem(agent_name, agent, &turn.provider, provider),
                open,
            ) {
                (Some(problem), _) => Err(problem),
                (None, None) => Err(
                    "this engine links no provider backend (the `engine` crate's `http` feature)"
                        .to_owned(),
                ),
                (None, Some(open)) => {
                    let key = provider
                        .api_key_secret
                        .as_ref()
                        .and_then(|secret| agent.secrets.get(secret));
                    open(provider, key.map(String::as_str)).map_err(|error| error.to_string())
                }
            };
            match made {
                Ok(made) => {
                    file.used_by.push(agent_name.clone());
                    by_agent.insert(agent_name.clone(), made);
                }
                Err(error) => {
                    let error = format!("the agent `{agent_name}` cannot use it: {error}");
                    file.state = "degraded";
                    file.error = Some(match file.error.take() {
                        Some(before) => format!("{before}; {error}"),
                        None => error,
                    });
                }
            }
        }
        for file in &mut files {
            if let Some(error) = &mut file.error {
                *error = redact.redact(error).into_owned();
            }
        }
        Self { files, by_agent }
    }

    /// The provider the files give the agent `agent`, if they give it one.
    pub(crate) fn provider(&self, agent: &str) -> Option<Arc<dyn Provider>> {
        self.by_agent.get(agent).cloned()
    }

    /// Every file, with its state.
    pub(crate) fn files(&self) -> &[ProviderFile] {
        &self.files
    }
}

/// Why the agent `agent_name` may not use the drop-in provider `provider_name`, if it
/// may not: the file names the agent's secret that holds its key, and that secret must
/// be one the agent has and no linked plugin declares (else a file could send a
/// plugin's token, a CRM's say, to the host it names).
pub(crate) fn key_problem(
    agent_name: &str,
    agent: &AgentConfig,
    provider_name: &str,
    provider: &ProviderConfig,
) -> Option<String> {
    let secret = provider.api_key_secret.as_deref()?;
    let tools = linked_tools()
        .filter(|tool| tool.secret_specs().any(|spec| spec.key == secret))
        .map(|tool| format!("the tool `{}`", tool.id()));
    let hooks = linked_hooks()
        .filter(|hook| hook.secret_specs().any(|spec| spec.key == secret))
        .map(|hook| format!("the hook `{}`", hook.id()));
    if let Some(reader) = tools.chain(hooks).next() {
        return Some(format!(
            "the provider `{provider_name}` takes its key from the secret `{secret}`, which {reader} declares: a provider file may name only a secret of its own (such as `{provider_name}_key`)"
        ));
    }
    if !agent.secrets.contains_key(secret) {
        return Some(format!(
            "the provider `{provider_name}` takes its key from the secret `{secret}`, which the agent does not have: set ENGINE_SECRET__{agent_name}__{secret}"
        ));
    }
    None
}

/// A provider file's text: its provider's name and configuration, or why not (with the
/// name, when the file gave a valid one).
fn parse(text: &str) -> Result<(String, ProviderConfig), (Option<String>, String)> {
    let value: Value = serde_json::from_str(text)
        .map_err(|error| (None, format!("the file is not JSON: {error}")))?;
    let Value::Object(mut object) = value else {
        return Err((
            None,
            "the file is not a JSON object; start from examples/providers/openai-compatible.json"
                .to_owned(),
        ));
    };
    let name =
        match object.remove("name") {
            Some(Value::String(name)) => name,
            Some(_) => return Err((None, "`name` is not a string".to_owned())),
            None => return Err((
                None,
                "`name` is missing: the provider's name, which an agent's `turn.provider` names"
                    .to_owned(),
            )),
        };
    check_name(&name).map_err(|error| (None, error))?;
    let fail = |error: String| (Some(name.clone()), error);
    // A provider that leaves its prices out costs nothing to the spend caps: a file
    // says so outright (0 for a free local server).
    for price in ["usd_per_million_input", "usd_per_million_output"] {
        if !object.contains_key(price) {
            return Err(fail(format!(
                "`{price}` is missing: give the provider's price in US dollars (0 for a free local server), which the turn's spend caps count"
            )));
        }
    }
    // Before the other checks, whose messages quote it: a URL may hold a key.
    match object.get("base_url") {
        Some(Value::String(url)) => check_url(url).map_err(fail)?,
        Some(_) => return Err(fail("`base_url` is not a string".to_owned())),
        None => {}
    }
    let mut unknown = Vec::new();
    let provider: ProviderConfig =
        serde_ignored::deserialize(Value::Object(object), |path| unknown.push(path.to_string()))
            .map_err(|error| fail(format!("the file is not a provider description: {error}")))?;
    if !unknown.is_empty() {
        return Err(fail(format!(
            "`{}` is not a key a provider file has (name, wire, base_url, model, api_key_secret, stream, usd_per_million_input, usd_per_million_output, max_retries, max_response_bytes)",
            unknown.join("`, `")
        )));
    }
    let mut problems = Vec::new();
    provider_problems("", &provider, &mut problems);
    if let Some(problem) = problems.first() {
        return Err(fail(format!(
            "`{}` {}: {}",
            problem.key, problem.problem, problem.fix
        )));
    }
    Ok((name, provider))
}

fn check_name(name: &str) -> Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || !name.chars().all(plain) {
        // Escaped: it is shown in a terminal by `engine check`.
        return Err(format!(
            "the name `{}` is not valid: use 1 to {MAX_NAME_CHARS} letters, digits, `_` and `-`",
            name.escape_debug()
        ));
    }
    Ok(())
}

/// A drop-in provider's base URL: `https://`, or `http://` on a loopback address, and
/// no user info (a key goes in the agent's secrets, never in a file). The refusals never
/// quote the URL, which may hold a key.
fn check_url(url: &str) -> Result<(), String> {
    let (secure, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (false, rest)
    } else {
        return Err("`base_url` does not start with https://: give an https:// URL".to_owned());
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(
            "`base_url` holds user info: a key goes in the agent's secrets, named by `api_key_secret`"
                .to_owned(),
        );
    }
    if secure || is_loopback(authority) {
        Ok(())
    } else {
        Err(
            "`base_url` is http:// to a host that is not loopback: a provider file needs https://, or http:// on a loopback address (127.0.0.1, [::1], localhost)"
                .to_owned(),
        )
    }
}

/// Whether the host of `authority` (`host`, `host:port`, `[v6]:port`) is loopback.
fn is_loopback(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
        || host.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        parse(text).expect_err(text).1
    }

    #[test]
    fn a_file_is_a_named_provider_table() {
        let (name, provider) = parse(
            r#"{"name": "fast", "wire": "openai", "base_url": "https://api.example.com/v1", "model": "m",
                "api_key_secret": "fast_key", "usd_per_million_input": 0.5, "usd_per_million_output": 1.5}"#,
        )
        .unwrap();
        assert_eq!(name, "fast");
        assert_eq!(provider.model, "m");
        assert_eq!(provider.api_key_secret.as_deref(), Some("fast_key"));
        assert!(provider.stream, "the table's defaults");
    }

    #[test]
    fn the_shipped_template_is_a_valid_provider_file() {
        let template = include_str!("../../../examples/providers/openai-compatible.json");
        let file = ProviderFile::new("openai-compatible.json".into(), Ok(template.to_owned()));
        assert_eq!(file.state, "ok", "{:?}", file.error);
        assert_eq!(file.name.as_deref(), Some("fast"));
    }

    #[test]
    fn unknown_keys_bad_values_and_names_are_refused_with_the_fix() {
        let base = r#""wire": "openai", "base_url": "https://h/v1", "model": "m", "usd_per_million_input": 0, "usd_per_million_output": 0"#;
        let cases = [
            (
                format!(r#"{{"name": "a", {base}, "api_key": "sk-1"}}"#),
                "`api_key` is not a key a provider file has",
            ),
            (format!(r#"{{{base}}}"#), "`name` is missing"),
            (format!(r#"{{"name": "a b", {base}}}"#), "is not valid"),
            (
                format!(r#"{{"name": "a", {base}, "max_retries": 11}}"#),
                "`max_retries` is 11",
            ),
            (
                r#"{"name": "a", "wire": "openai", "base_url": "https://h/v1", "model": "m", "usd_per_million_input": -1, "usd_per_million_output": 0}"#.to_owned(),
                "`usd_per_million_input` is -1",
            ),
            (
                r#"{"name": "a", "wire": "openai", "base_url": "https://h/v1", "model": "m", "usd_per_million_output": 0}"#.to_owned(),
                "`usd_per_million_input` is missing",
            ),
            (
                r#"{"name": "a", "wire": "smoke", "base_url": "https://h", "model": "m", "usd_per_million_input": 0, "usd_per_million_output": 0}"#.to_owned(),
                "not a provider description",
            ),
            ("[1]".to_owned(), "not a JSON object"),
            ("{".to_owned(), "not JSON"),
            // A name is shown escaped: `engine check` prints it in a terminal.
            (
                format!(r#"{{"name": "a\u001b[2J", {base}}}"#),
                "the name `a\\u{1b}[2J` is not valid",
            ),
        ];
        for (text, expected) in cases {
            let said = refused(&text);
            assert!(said.contains(expected), "{text}: {said}");
        }
        // A URL that may hold a key is never quoted.
        let said = refused(
            r#"{"name": "a", "wire": "openai", "base_url": "ftp://u:sk-9@h/v1?key=sk-9", "model": "m", "usd_per_million_input": 0, "usd_per_million_output": 0}"#,
        );
        assert!(!said.contains("sk-9"), "{said}");
        // The name survives a later error, for the listing.
        let (name, _) = parse(&format!(r#"{{"name": "a", {base}, "x": 1}}"#)).unwrap_err();
        assert_eq!(name.as_deref(), Some("a"));
    }

    #[test]
    fn plain_http_is_for_loopback_only_and_user_info_never() {
        for url in [
            "http://127.0.0.1:8000/v1",
            "http://127.1.2.3/v1",
            "http://localhost:11434/v1",
            "http://[::1]:8000/v1",
            "https://api.example.com/v1",
        ] {
            assert_eq!(check_url(url), Ok(()), "{url}");
        }
        for url in [
            "http://api.example.com/v1",
            "http://10.0.0.1/v1",
            "http://127.0.0.1.example.com/v1",
            "http://[::2]/v1",
            "ftp://h/v1",
        ] {
            assert!(check_url(url).is_err(), "{url}");
        }
        let userinfo = check_url("https://user:sk-secret@api.example.com/v1").unwrap_err();
        assert!(userinfo.contains("user info"), "{userinfo}");
        assert!(!userinfo.contains("sk-secret"), "{userinfo}");
    }
}
