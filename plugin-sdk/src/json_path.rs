//! The path of the value at a position in JSON text, for errors that name the field.
//!
//! serde_json reports where deserialization failed (line and column) but not in which
//! field. Scanning the text up to that position recovers it: `to.zip`, `tags[1]`. This
//! needs no second deserialization, and so no second copy of each arguments type's
//! `Deserialize` code in the binary.

/// One step into a JSON document.
enum Step<'a> {
    /// Inside an object: the key of the member being read, once seen.
    Key(Option<&'a str>),
    /// Inside an array: the index of the element being read.
    Index(usize),
}

/// The path to the value being read at `line` and `column` (1-based, as serde_json
/// counts them) of `text`, such as `to.zip` or `tags[1]`; empty at the root.
pub(crate) fn path_at(text: &str, line: usize, column: usize) -> String {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let end = (line_start + column).min(text.len());
    let mut steps: Vec<Step<'_>> = Vec::new();
    let mut expecting_key = false;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < end {
        match bytes[at] {
            b'{' => {
                steps.push(Step::Key(None));
                expecting_key = true;
            }
            b'[' => steps.push(Step::Index(0)),
            b'}' | b']' => {
                steps.pop();
            }
            b',' => match steps.last_mut() {
                Some(Step::Index(index)) => *index += 1,
                Some(Step::Key(key)) => {
                    *key = None;
                    expecting_key = true;
                }
                None => {}
            },
            b'"' => {
                let start = at + 1;
                at = string_end(bytes, start);
                if expecting_key {
                    if let Some(Step::Key(key)) = steps.last_mut() {
                        *key = text.get(start..at);
                    }
                    expecting_key = false;
                }
            }
            _ => {}
        }
        at += 1;
    }
    let mut path = String::new();
    for step in &steps {
        match step {
            Step::Key(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Step::Key(None) => {}
            Step::Index(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// The message for serde's "unknown field" and "missing field" errors, naming the key
/// by its whole path: `unknown key `to.colour` (expected one of `city`, `zip`)`. `None`
/// for any other error.
///
/// serde raises an unknown key where it reads the key, so `path` ends with it; it
/// raises a missing key (and a key of an internally tagged enum's variant, read after
/// the whole object) once the object is read, so `path` is the object's.
pub(crate) fn key_error(path: &str, reason: &str) -> Option<String> {
    let join = |key: &str| match path {
        "" => key.to_owned(),
        _ => format!("{path}.{key}"),
    };
    if let Some(rest) = reason.strip_prefix("missing field `") {
        let key = join(rest.strip_suffix('`')?);
        return Some(format!(
            "invalid arguments: missing key `{key}`: the schema requires every key it lists; send null to leave out one that may be null"
        ));
    }
    let rest = reason.strip_prefix("unknown field `")?;
    let (key, expected) = rest.split_once("`, ")?;
    let expected = match expected {
        "there are no fields" => "the object takes no keys",
        expected => expected,
    };
    let read_at_the_key = path == key || path.ends_with(&format!(".{key}"));
    let key = if read_at_the_key {
        path.to_owned()
    } else {
        join(key)
    };
    Some(format!(
        "invalid arguments: unknown key `{key}` ({expected}); the schema allows no other keys"
    ))
}

/// The index of the quote that closes the string whose contents start at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at,
            _ => at += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path at the position serde_json reports for the failed deserialization.
    fn path_of_error<T: serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) -> String {
        let error = serde_json::from_str::<T>(text).expect_err("the text must not fit");
        path_at(text, error.line(), error.column())
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Parcel {
        to: Address,
        tags: Vec<String>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Address {
        city: String,
        zip: u32,
    }

    #[test]
    fn a_wrong_type_is_found_in_nested_objects_and_lists() {
        let text = r#"{"to": {"city": "Rome", "zip": "00118"}, "tags": []}"#;
        assert_eq!(path_of_error::<Parcel>(text), "to.zip");
        let text = r#"{"to": {"city": "Rome", "zip": 1}, "tags": ["a", "b", 7]}"#;
        assert_eq!(path_of_error::<Parcel>(text), "tags[2]");
        let text = "{\n  \"tags\": [],\n  \"to\": {\n    \"city\": 5\n  }\n}";
        assert_eq!(path_of_error::<Parcel>(text), "to.city");
    }

    #[test]
    fn a_missing_field_is_reported_at_the_object_that_lacks_it() {
        let text = r#"{"to": {"city": "Rome"}, "tags": []}"#;
        assert_eq!(path_of_error::<Parcel>(text), "to");
        assert_eq!(path_of_error::<Parcel>(r#"{"tags": []}"#), "");
    }

    #[test]
    fn serdes_key_errors_name_the_key_by_its_whole_path() {
        let unknown = "unknown field `colour`, expected `city` or `zip`";
        // Read at the key: the path ends with it.
        assert_eq!(
            key_error("to.colour", unknown).unwrap(),
            "invalid arguments: unknown key `to.colour` (expected `city` or `zip`); the schema allows no other keys"
        );
        // Read after the object, as serde reads an internally tagged enum: the path is
        // the object's.
        assert!(key_error("to", unknown).unwrap().contains("`to.colour`"));
        let missing = key_error("to", "missing field `zip`").unwrap();
        assert!(
            missing.starts_with("invalid arguments: missing key `to.zip`: "),
            "{missing}"
        );
        assert!(key_error("", "missing field `to`")
            .unwrap()
            .contains("`to`"));
        let none = key_error("", "unknown field `x`, there are no fields").unwrap();
        assert!(none.contains("(the object takes no keys)"), "{none}");
        assert_eq!(
            key_error("to.zip", "invalid type: string \"1\", expected u32"),
            None
        );
    }

    #[test]
    fn quotes_brackets_and_commas_inside_strings_are_not_structure() {
        let text = r#"{"tags": ["a,\"]}{", "[b]"], "to": {"city": "x\"y,z", "zip": true}}"#;
        assert_eq!(path_of_error::<Parcel>(text), "to.zip");
    }
}
