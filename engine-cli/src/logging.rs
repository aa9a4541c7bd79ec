//! Which log lines are written: `RUST_LOG`, read forgivingly.

use tracing_subscriber::filter::Targets;

/// What is logged: INFO and up, but rmcp's only from WARN (it logs every request at
/// INFO); or what `RUST_LOG` says, in tracing's target syntax (`rmcp=info,debug`), each
/// directive trimmed, with INFO for whatever it names no level for. A `RUST_LOG` that
/// does not parse is answered beside the default, to be logged.
pub(crate) fn log_levels(variable: Option<String>) -> (Targets, Option<String>) {
    let default = Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target("rmcp", tracing::Level::WARN);
    let Some(variable) = variable else {
        return (default, None);
    };
    let directives: Vec<&str> = variable
        .split(',')
        .map(str::trim)
        .filter(|directive| !directive.is_empty())
        .collect();
    if directives.is_empty() {
        return (default, None);
    }
    match directives.join(",").parse::<Targets>() {
        Ok(levels) if levels.default_level().is_some() => (levels, None),
        Ok(levels) => (levels.with_default(tracing::Level::INFO), None),
        Err(error) => (default, Some(error.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::log_levels;

    fn enabled(variable: Option<&str>, target: &str, level: Level) -> bool {
        log_levels(variable.map(str::to_owned))
            .0
            .would_enable(target, &level)
    }

    #[test]
    fn rmcp_logs_from_warn_and_the_rest_from_info_by_default() {
        for unset in [None, Some(""), Some(" , ")] {
            assert!(!enabled(unset, "rmcp::service", Level::INFO));
            assert!(enabled(unset, "rmcp::service", Level::WARN));
            assert!(enabled(unset, "engine_core", Level::INFO));
            assert!(!enabled(unset, "engine_core", Level::DEBUG));
        }
    }

    #[test]
    fn a_rust_log_with_slips_still_logs_warnings_and_a_bad_one_is_reported() {
        // Spaces around directives, a trailing comma, a word that is not a level: each
        // leaves INFO for what it does not name.
        for slip in ["rmcp=info, info", "info,", "inof", "rmcp=debug"] {
            assert!(enabled(Some(slip), "engine_core", Level::WARN), "{slip}");
            assert!(log_levels(Some(slip.to_owned())).1.is_none(), "{slip}");
        }
        assert!(enabled(
            Some("rmcp=info, info"),
            "rmcp::service",
            Level::INFO
        ));
        assert!(enabled(Some("rmcp=debug"), "rmcp", Level::DEBUG));
        let (levels, ignored) = log_levels(Some("rmcp=verbose".to_owned()));
        assert!(ignored.is_some());
        assert!(!levels.would_enable("rmcp", &Level::INFO));
    }
}
