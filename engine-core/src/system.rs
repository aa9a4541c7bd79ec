//! What the engine's image must carry for the linked plugins' tools: the union of their
//! `plugin! { system = { ... } }` blocks, as JSON or as Dockerfile lines, and the
//! variables' defaults, which a value set in the environment overrides.

use std::collections::BTreeMap;

use plugin_sdk::engine::PluginManifest;
use serde::Serialize;

/// The union of the plugins' system requirements.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SystemRequirements {
    /// Each Debian package, with the plugins (`package version`) that need it.
    pub debian: BTreeMap<String, Vec<String>>,
    /// Each variable, with its default and the plugins that declare it.
    pub env: BTreeMap<String, VariableDefault>,
}

/// A variable's default, as one or more plugins declare it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VariableDefault {
    /// The value, when the environment sets none.
    pub default: String,
    /// The plugins that declare it, as `package version`.
    pub plugins: Vec<String>,
}

/// Two plugins declare one variable with different defaults: no image can carry both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariableConflict {
    /// The variable.
    pub name: String,
    /// Each plugin (`package version`) and the value it declares, in plugin order.
    pub declared: Vec<(String, String)>,
}

impl std::fmt::Display for VariableConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let declared: Vec<String> = self
            .declared
            .iter()
            .map(|(plugin, value)| format!("{plugin} declares {:?}", value))
            .collect();
        write!(
            f,
            "the variable `{}` has different defaults: {}",
            self.name,
            declared.join(", ")
        )
    }
}

impl SystemRequirements {
    /// The union of `plugins`' blocks, or every variable two of them declare with
    /// different values.
    pub fn of(plugins: &[&PluginManifest]) -> Result<Self, Vec<VariableConflict>> {
        let mut union = Self::default();
        let mut declared: BTreeMap<&str, Vec<(String, &str)>> = BTreeMap::new();
        for plugin in plugins {
            let who = format!("{} {}", plugin.package, plugin.version);
            for package in plugin.system.debian {
                union
                    .debian
                    .entry((*package).to_owned())
                    .or_default()
                    .push(who.clone());
            }
            for (name, value) in plugin.system.env {
                declared.entry(name).or_default().push((who.clone(), value));
            }
        }
        let mut conflicts = Vec::new();
        for (name, declarations) in declared {
            let default = declarations[0].1;
            if declarations.iter().any(|(_, value)| *value != default) {
                conflicts.push(VariableConflict {
                    name: name.to_owned(),
                    declared: declarations
                        .into_iter()
                        .map(|(plugin, value)| (plugin, value.to_owned()))
                        .collect(),
                });
                continue;
            }
            union.env.insert(
                name.to_owned(),
                VariableDefault {
                    default: default.to_owned(),
                    plugins: declarations.into_iter().map(|(plugin, _)| plugin).collect(),
                },
            );
        }
        if conflicts.is_empty() {
            Ok(union)
        } else {
            Err(conflicts)
        }
    }

    /// The requirements of every plugin this binary links.
    pub fn linked() -> Result<Self, Vec<VariableConflict>> {
        let mut plugins: Vec<&PluginManifest> = plugin_sdk::engine::linked_plugins().collect();
        // Link order depends on the linker.
        plugins.sort_by_key(|plugin| (plugin.namespace, plugin.package));
        Self::of(&plugins)
    }

    /// The variables to set at start-up: each declared one the environment does not set
    /// (`is_set` answers for a name; a variable set to the empty string is set).
    pub fn defaults_to_apply(&self, is_set: impl Fn(&str) -> bool) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .filter(|(name, _)| !is_set(name))
            .map(|(name, variable)| (name.as_str(), variable.default.as_str()))
            .collect()
    }

    /// Dockerfile lines for an image's runtime stage: one `apt-get install` of the
    /// packages, one `ENV` per variable (a value the container's environment sets wins).
    pub fn dockerfile(&self) -> String {
        let mut lines = String::from("# The linked plugins' system requirements.\n");
        if !self.debian.is_empty() {
            let packages: Vec<&str> = self.debian.keys().map(String::as_str).collect();
            lines += &format!(
                "RUN apt-get update \\\n && apt-get install -y --no-install-recommends {} \\\n && rm -rf /var/lib/apt/lists/*\n",
                packages.join(" ")
            );
        }
        for (name, variable) in &self.env {
            lines += &format!("ENV {name}=\"{}\"\n", dockerfile_quoted(&variable.default));
        }
        lines
    }
}

/// `value` inside a Dockerfile's double quotes: `\`, `"` and `$` (which the builder would
/// substitute) escaped. Control characters never get here (the macro refuses them).
fn dockerfile_quoted(value: &str) -> String {
    let mut quoted = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | '"' | '$') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_sdk::engine::System;

    fn plugin(
        package: &'static str,
        debian: &'static [&'static str],
        env: &'static [(&'static str, &'static str)],
    ) -> &'static PluginManifest {
        Box::leak(Box::new(PluginManifest {
            namespace: package,
            package,
            version: "0.1.0",
            engine: ">=0.1",
            display_name: None,
            description: None,
            api_version: None,
            state: None,
            system: System { debian, env },
            catalogue: plugin_sdk::engine::Catalogue::NONE,
            oauth: &[],
        }))
    }

    #[test]
    fn the_union_lists_each_package_once_with_every_plugin_that_needs_it() {
        let pdf = plugin(
            "pdf",
            &["poppler-utils", "ca-certificates"],
            &[("PDF_DPI", "150")],
        );
        let web = plugin(
            "web",
            &["ca-certificates"],
            &[("PDF_DPI", "150"), ("WEB_UA", "bot")],
        );
        let union = SystemRequirements::of(&[pdf, web]).unwrap();
        assert_eq!(
            union.debian.into_iter().collect::<Vec<_>>(),
            [
                (
                    "ca-certificates".to_owned(),
                    vec!["pdf 0.1.0".to_owned(), "web 0.1.0".to_owned()]
                ),
                ("poppler-utils".to_owned(), vec!["pdf 0.1.0".to_owned()]),
            ]
        );
        assert_eq!(union.env["PDF_DPI"].plugins, ["pdf 0.1.0", "web 0.1.0"]);
        assert_eq!(union.env["WEB_UA"].default, "bot");
    }

    #[test]
    fn one_variable_with_two_values_is_a_conflict_naming_both_plugins_and_values() {
        let a = plugin("a", &[], &[("MODE", "fast"), ("OK", "1")]);
        let b = plugin("b", &[], &[("MODE", "safe")]);
        let conflicts = SystemRequirements::of(&[a, b]).unwrap_err();
        assert_eq!(
            conflicts.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["the variable `MODE` has different defaults: a 0.1.0 declares \"fast\", b 0.1.0 declares \"safe\""]
        );
    }

    #[test]
    fn a_variable_the_environment_sets_even_empty_keeps_its_value() {
        let a = plugin(
            "a",
            &[],
            &[
                ("SET", "default"),
                ("EMPTY", "default"),
                ("UNSET", "default"),
            ],
        );
        let union = SystemRequirements::of(&[a]).unwrap();
        let environment = [("SET", "mine"), ("EMPTY", "")];
        let is_set = |name: &str| environment.iter().any(|(set, _)| *set == name);
        assert_eq!(union.defaults_to_apply(is_set), [("UNSET", "default")]);
    }

    #[test]
    fn dockerfile_lines_install_the_union_and_quote_the_defaults() {
        let a = plugin(
            "a",
            &["poppler-utils", "ca-certificates"],
            &[("GREETING", r#"say "hi" to $USER\n"#)],
        );
        let lines = SystemRequirements::of(&[a]).unwrap().dockerfile();
        assert_eq!(
            lines,
            "# The linked plugins' system requirements.\n\
             RUN apt-get update \\\n && apt-get install -y --no-install-recommends ca-certificates poppler-utils \\\n && rm -rf /var/lib/apt/lists/*\n\
             ENV GREETING=\"say \\\"hi\\\" to \\$USER\\\\n\"\n"
        );
        let none = SystemRequirements::of(&[]).unwrap().dockerfile();
        assert_eq!(none, "# The linked plugins' system requirements.\n");
    }
}
