//! One thing wrong with a configuration: where (the key's dotted path), what, and the fix.

use std::fmt;

/// A problem start-up refuses, as `engine config check` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The key's dotted path, as in `agents.support.tools`.
    pub key: String,
    /// What is wrong with it, as a phrase that follows the key ("is 0", "is not a key
    /// the engine reads").
    pub problem: String,
    /// What to do.
    pub fix: String,
}

impl ConfigProblem {
    pub(crate) fn new(
        key: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            key: key.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}: {}", self.key, self.problem, self.fix)
    }
}
