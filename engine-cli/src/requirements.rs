//! `image requirements`, and the variable defaults the linked plugins declare, applied
//! before anything else runs.

use std::process::ExitCode;

use crate::args::RequirementsFormat;

/// `engine image requirements`.
pub(crate) fn print(format: RequirementsFormat) -> ExitCode {
    let requirements = match engine_core::SystemRequirements::linked() {
        Ok(requirements) => requirements,
        Err(conflicts) => {
            for conflict in conflicts {
                eprintln!("no image can carry these plugins: {conflict}");
            }
            return ExitCode::FAILURE;
        }
    };
    match format {
        RequirementsFormat::Dockerfile => print!("{}", requirements.dockerfile()),
        RequirementsFormat::Packages => {
            let packages: Vec<&str> = requirements.debian.keys().map(String::as_str).collect();
            println!("{}", packages.join(" "));
        }
        RequirementsFormat::Json => {
            // Whether the environment sets a variable, never its value (it may be secret).
            let env: serde_json::Map<String, serde_json::Value> = requirements
                .env
                .iter()
                .map(|(name, variable)| {
                    let described = serde_json::json!({
                        "default": variable.default,
                        "plugins": variable.plugins,
                        "set_in_environment": std::env::var_os(name).is_some(),
                    });
                    (name.clone(), described)
                })
                .collect();
            let report = serde_json::json!({ "debian": requirements.debian, "env": env });
            println!("{report:#}");
        }
    }
    ExitCode::SUCCESS
}

/// Sets each variable the linked plugins declare (`plugin! { system }`) to its default,
/// unless the environment sets it (even to the empty string): the image then runs as its
/// Dockerfile's `ENV` lines describe, with or without them. When two plugins disagree on
/// one, no default is set: start-up refuses those plugins.
///
/// # Safety
///
/// As [`take_environment`](engine_core::config::take_environment): no other thread may
/// exist yet.
pub(crate) unsafe fn apply_variable_defaults() {
    let Ok(requirements) = engine_core::SystemRequirements::linked() else {
        return;
    };
    for (name, value) in requirements.defaults_to_apply(|name| std::env::var_os(name).is_some()) {
        std::env::set_var(name, value);
    }
}
