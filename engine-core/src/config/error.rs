//! Why a configuration could not be read.

use std::path::{Path, PathBuf};

use plugin_sdk::engine::{Redact, RedactValues};

use super::{ConfigProblem, SECRET_ENV_PREFIX};

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not a valid configuration.
    #[error("{}{message}", path.as_ref().map(|path| format!("{}: ", path.display())).unwrap_or_default())]
    Invalid {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// What is wrong, and where.
        message: String,
    },
    /// The configuration parses, and holds values the engine refuses: every one, each
    /// with its key and its fix.
    #[error("{}", problems_report(path.as_deref(), problems))]
    Problems {
        /// The file, when the configuration came from one.
        path: Option<PathBuf>,
        /// What is wrong.
        problems: Vec<ConfigProblem>,
    },
    /// A secret variable's name does not say which agent and key it is for.
    #[error("`{name}` names no agent and key: write {SECRET_ENV_PREFIX}<agent>__<key>")]
    SecretVariable {
        /// The variable.
        name: String,
    },
    /// A secret variable names an agent the configuration file does not define (a typo
    /// would otherwise make a new agent, and leave the meant one without its key).
    #[error("`{name}` is for the agent `{agent}`, which the configuration does not define; the configured agents are: {}. Rename the variable, or add [agents.{agent}] to the configuration", agents.join(", "))]
    UnknownSecretAgent {
        /// The variable.
        name: String,
        /// The agent it names.
        agent: String,
        /// The agents the configuration defines.
        agents: Vec<String>,
    },
}

/// `problems` one per line, each after the file it is in.
fn problems_report(path: Option<&Path>, problems: &[ConfigProblem]) -> String {
    let at = path
        .map(|path| format!("{}: ", path.display()))
        .unwrap_or_default();
    let mut report = format!("{} problem(s):", problems.len());
    for problem in problems {
        report.push_str(&format!("\n  {at}{problem}"));
    }
    report
}

impl ConfigError {
    /// The same error with every value `redact` knows replaced in its message.
    pub(super) fn redacted(self, redact: &RedactValues) -> Self {
        match self {
            Self::Invalid { path, message } => Self::Invalid {
                path,
                message: redact.redact(&message).into_owned(),
            },
            other => other,
        }
    }
}
