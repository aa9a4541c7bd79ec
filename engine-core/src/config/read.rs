//! Reading a configuration: the file, the secret variables, the unknown keys; and what
//! is derived from it (the data and extensions directories, the values to redact).

use std::path::{Path, PathBuf};

use plugin_sdk::engine::RedactValues;

use super::{
    check, suggest, toml_error, AgentConfig, ConfigError, ConfigProblem, EngineConfig,
    SecretOrigin, DEFAULT_AGENT, SECRET_ENV_PREFIX,
};

impl EngineConfig {
    /// [`read`](Self::read), then [`check`](Self::check).
    pub fn load(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let config = Self::read(path, env)?;
        config.check()?;
        Ok(config)
    }

    /// Reads `path` (if given) and the secrets among `env`, then makes sure there is an
    /// agent: with none configured, the engine has [`DEFAULT_AGENT`], which grants
    /// nothing. Values are not checked: the engine's builder checks them with what it
    /// links, and reports every problem at once.
    ///
    /// When the file defines agents, a secret variable must name one of them; without a
    /// file, or with a file that defines none, the variables define the agents. No error
    /// quotes a secret: a TOML error gives its message and position, never the line, and
    /// any secret value the message quotes is redacted.
    pub fn read(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let variables = secret_variables(env)?;
        let text = match path {
            Some(path) => {
                Some(
                    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                        path: path.to_owned(),
                        source,
                    })?,
                )
            }
            None => None,
        };
        Self::from_text(path.zip(text.as_deref()), variables)
    }

    /// [`read`](Self::read) of `text` as if it were the file at `path`'s: how the admin
    /// panel tries a change before it writes it.
    pub fn read_text(
        path: &Path,
        text: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        Self::from_text(Some((path, text)), secret_variables(env)?)
    }

    /// The configuration of `file` (its path and text; none: no file) with the secret
    /// `variables`, as [`read`](Self::read) describes.
    fn from_text(
        file: Option<(&Path, &str)>,
        variables: Vec<SecretVariable>,
    ) -> Result<Self, ConfigError> {
        let from_env = RedactValues::new(variables.iter().map(|variable| variable.value.clone()));
        let mut config = match file {
            Some((path, text)) => {
                let mut config = Self::parse_unchecked(text).map_err(|error| {
                    match error.redacted(&from_env) {
                        ConfigError::Invalid { message, .. } => ConfigError::Invalid {
                            path: Some(path.to_owned()),
                            message,
                        },
                        other => other,
                    }
                })?;
                config.file = Some(path.to_owned());
                config
            }
            None => Self::default(),
        };
        let file_defines_agents = !config.agents.is_empty();
        for SecretVariable {
            name,
            agent,
            key,
            value,
        } in variables
        {
            if file_defines_agents && !config.agents.contains_key(&agent) {
                return Err(ConfigError::UnknownSecretAgent {
                    name,
                    agent,
                    agents: config.agents.keys().cloned().collect(),
                });
            }
            config.agents.entry(agent).or_default().set_secret(
                key,
                value,
                SecretOrigin::Environment,
            );
        }
        config.ensure_an_agent();
        Ok(config)
    }

    /// Adds the secrets the admin panel set (agent, key, value), below the environment's
    /// (a secret a variable gave stays the variable's) and above the file's; an agent
    /// the configuration does not have is skipped (its values wait, unread, until it
    /// comes back). A panel's secret is never "a secret nothing the agent enables reads":
    /// it may be set before the tool that reads it is enabled, and outlive it.
    pub fn add_panel_secrets(
        &mut self,
        values: impl IntoIterator<Item = (String, String, String)>,
    ) {
        for (agent, key, value) in values {
            let Some(agent) = self.agents.get_mut(&agent) else {
                continue;
            };
            if agent.secret_origin(&key) != Some(SecretOrigin::Environment) {
                agent.set_secret(key, value, SecretOrigin::Panel);
            }
        }
    }

    /// Parses TOML text and checks every value. An error gives toml's message and the
    /// line and column, not the text there (it may be a secret), with every value of a
    /// `secrets` table redacted from the message.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let config = Self::parse_unchecked(text)?;
        config.check()?;
        Ok(config)
    }

    /// Parses TOML text, noting the keys it does not read instead of refusing the first.
    fn parse_unchecked(text: &str) -> Result<Self, ConfigError> {
        let invalid = |error: toml::de::Error| ConfigError::Invalid {
            path: None,
            message: toml_error::toml_error(text, &error),
        };
        let document = toml::de::Deserializer::parse(text).map_err(invalid)?;
        let mut unknown_keys = Vec::new();
        let mut config: Self = serde_ignored::deserialize(document, |path| {
            unknown_keys.push(plugin_sdk::engine::dotted_key(&path))
        })
        .map_err(invalid)?;
        unknown_keys.sort();
        config.unknown_keys = unknown_keys;
        Ok(config)
    }

    /// Checks every value: no key the engine does not read, money finite and not
    /// negative, durations and sizes within the bounds this module's constants state.
    /// [`parse`](Self::parse) and the engine's builder call it; each problem names the
    /// key and the fix.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.refuse(self.problems())
    }

    /// Every problem [`check`](Self::check) finds.
    pub(crate) fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems: Vec<ConfigProblem> = self
            .unknown_keys
            .iter()
            .map(|key| {
                ConfigProblem::new(
                    key,
                    "is not a key the engine reads",
                    suggest::unknown_key_fix(key),
                )
            })
            .collect();
        problems.extend(check::problems(self));
        problems
    }

    /// `Ok` without problems, else all of them, naming the file the configuration came
    /// from.
    pub(crate) fn refuse(&self, problems: Vec<ConfigProblem>) -> Result<(), ConfigError> {
        if problems.is_empty() {
            return Ok(());
        }
        Err(ConfigError::Problems {
            path: self.file.clone(),
            problems,
        })
    }

    /// Gives a configuration without agents the agent [`DEFAULT_AGENT`], which grants
    /// nothing: an engine always has an agent to call through.
    pub(crate) fn ensure_an_agent(&mut self) {
        if self.agents.is_empty() {
            self.agents
                .insert(DEFAULT_AGENT.to_owned(), AgentConfig::default());
        }
    }

    /// Where data lives.
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("data"))
    }

    /// The file it was read from, if it was read from one.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Every configured secret value, for redaction; but a published choice: the value
    /// of a key that linked code declares only as a `select`, when it is one of the
    /// choices written in the plugins' source (a short one, `eu`, would blank out every
    /// word that holds it). Any other value of such a key stays redacted.
    pub(crate) fn secret_values(&self) -> impl Iterator<Item = &str> {
        self.agents
            .values()
            .flat_map(|agent| agent.secrets.iter())
            .filter(|(key, value)| !is_published_choice(key, value))
            .map(|(_, value)| value.as_str())
            .chain(self.extensions.secrets.values().map(String::as_str))
    }

    /// The directory of external tools: `extensions.dir` resolved against the
    /// configuration file's directory, or `tools.d` beside the file; none without a file
    /// (nor a directory set).
    pub fn extensions_dir(&self) -> Option<PathBuf> {
        self.beside_the_file(self.extensions.dir.as_deref(), "tools.d")
    }

    /// The directory of drop-in providers: `[extensions] providers_dir`, relative to the
    /// configuration file's directory, or `providers.d` beside the file; without a file,
    /// the directory set, or none.
    pub fn providers_dir(&self) -> Option<PathBuf> {
        self.beside_the_file(self.extensions.providers_dir.as_deref(), "providers.d")
    }

    /// `given` relative to the configuration file's directory, or `default` beside the
    /// file; `given` alone without a file, nothing without either.
    fn beside_the_file(&self, given: Option<&Path>, default: &str) -> Option<PathBuf> {
        let beside = self
            .file
            .as_ref()
            .map(|file| file.parent().unwrap_or(Path::new("")).to_owned());
        match (given, beside) {
            (Some(dir), Some(beside)) => Some(beside.join(dir)),
            (Some(dir), None) => Some(dir.to_owned()),
            (None, beside) => beside.map(|beside| beside.join(default)),
        }
    }
}

/// One `ENGINE_SECRET__<agent>__<key>` variable, read.
struct SecretVariable {
    name: String,
    agent: String,
    key: String,
    value: String,
}

/// The secret variables among `env`, each split into its agent and key.
fn secret_variables(
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<SecretVariable>, ConfigError> {
    let mut variables = Vec::new();
    for (name, value) in env {
        let Some(rest) = name.strip_prefix(SECRET_ENV_PREFIX) else {
            continue;
        };
        let Some((agent, key)) = rest.split_once("__") else {
            return Err(ConfigError::SecretVariable { name });
        };
        variables.push(SecretVariable {
            agent: agent.to_owned(),
            key: key.to_owned(),
            name,
            value,
        });
    }
    Ok(variables)
}

/// Whether `value` is a published choice of `key`: every linked declaration of the key
/// is a `select`, and each lists `value` among its choices.
pub(crate) fn is_published_choice(key: &str, value: &str) -> bool {
    let tools = plugin_sdk::engine::linked_tools().flat_map(|tool| tool.secret_specs());
    let hooks = plugin_sdk::engine::linked_hooks().flat_map(|hook| hook.secret_specs());
    let mut declared = tools.chain(hooks).filter(|spec| spec.key == key).peekable();
    declared.peek().is_some()
        && declared.all(|spec| match spec.kind {
            plugin_sdk::secrets::SecretKind::Select(choices) => choices.contains(&value),
            _ => false,
        })
}
