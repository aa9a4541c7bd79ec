//! A tool's arguments checked against the JSON Schema its file declares, before anything
//! runs.

use engine_core::external::RunError;
use serde_json::Value;

/// The most schema errors one refusal lists.
const MAX_ERRORS: usize = 5;

/// The compiled schema of one tool's arguments.
pub struct Arguments(jsonschema::Validator);

impl Arguments {
    /// Compiles `schema`, which must be a valid JSON Schema (its meta-schema checked;
    /// no remote references are fetched). Its `pattern`s run on the `regex` engine, in
    /// time linear in the argument (a pattern with look-around is refused), so that no
    /// schema makes a check backtrack for long on the engine's workers.
    pub fn new(schema: &Value) -> Result<Self, String> {
        jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(schema)
            .map(Self)
            .map_err(|error| format!("its input schema is not a valid JSON Schema: {error}"))
    }

    /// Whether `arguments` (JSON text) fit the schema. The refusal names where each
    /// misfit is and what the schema wanted, never the value (it may be large, or
    /// something the model should not see again).
    pub fn check(&self, arguments: &str) -> Result<(), RunError> {
        let value: Value = serde_json::from_str(arguments).map_err(|error| {
            RunError::InvalidArguments(format!("the arguments are not JSON: {error}"))
        })?;
        let errors: Vec<String> = self
            .0
            .iter_errors(&value)
            .take(MAX_ERRORS)
            .map(|error| {
                let at = error.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                format!("at `{at}`: {}", error.masked())
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(RunError::InvalidArguments(format!(
                "the arguments do not fit the tool's schema: {}",
                errors.join("; ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Arguments {
        Arguments::new(&json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn fitting_arguments_pass() {
        assert_eq!(schema().check(r#"{"city": "Rome", "days": 2}"#), Ok(()));
    }

    #[test]
    fn misfits_are_named_by_place_without_their_value() {
        let Err(RunError::InvalidArguments(message)) =
            schema().check(r#"{"city": "supersecretvalue", "days": "supersecretvalue", "x": 1}"#)
        else {
            panic!("refused")
        };
        assert!(message.contains("at `/days`"), "{message}");
        assert!(!message.contains("supersecretvalue"), "{message}");
        let Err(RunError::InvalidArguments(missing)) = schema().check("{}") else {
            panic!()
        };
        assert!(missing.contains("city"), "{missing}");
        assert!(
            matches!(schema().check("{"), Err(RunError::InvalidArguments(m)) if m.starts_with("the arguments are not JSON"))
        );
    }

    #[test]
    fn patterns_run_in_linear_time_and_look_around_is_refused() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}});
        let arguments = Arguments::new(&schema).unwrap();
        let evil = format!(r#"{{"a": "{}!"}}"#, "a".repeat(50_000));
        assert!(arguments.check(r#"{"a": "aaa"}"#).is_ok());
        // On a thread, with a bound: a backtracking engine would take longer than the
        // universe has on this input, and the test must fail rather than hang. Linear
        // time is milliseconds, so only such a regression meets the bound.
        let (checked, answer) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = checked.send(arguments.check(&evil));
        });
        let answer = answer
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the pattern backtracked: the check did not end within 30 s");
        assert!(matches!(answer, Err(RunError::InvalidArguments(_))));
        let look_around =
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=a)"}}});
        assert!(Arguments::new(&look_around).is_err());
    }

    #[test]
    fn an_invalid_schema_is_refused() {
        let error =
            Arguments::new(&json!({"type": "object", "properties": {"a": {"type": "strin"}}}))
                .err()
                .unwrap();
        assert!(error.contains("not a valid JSON Schema"), "{error}");
    }
}
