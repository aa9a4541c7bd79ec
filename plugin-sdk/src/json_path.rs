//! The path of the value at a position in JSON text, for errors that name the field.
//!
//! serde_json reports where deserialization failed (line and column) but not in which
//! field. Scanning the text up to that position recovers it: `to.zip`, `tags[1]`. This
//! needs no second deserialization, and so no second copy of each arguments type's
//! `Deserialize` code in the binary.

/// One step of a path: into an object's member, or into an array's element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    /// The member with this key, as the key reads (escapes resolved).
    Key(String),
    /// The element at this index.
    Index(usize),
}

/// A path to a value, as errors name it: `to.zip`, `tags[1]`; empty at the root.
pub(crate) type Path = Vec<Segment>;

/// `path` as errors name it: `to.zip`, `tags[1]`.
pub(crate) fn display(path: &[Segment]) -> String {
    let mut text = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(key);
            }
            Segment::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

/// One step into a JSON document, while scanning it.
enum Step {
    /// Inside an object: the key of the member being read, once seen.
    Key(Option<String>),
    /// Inside an array: the index of the element being read.
    Index(usize),
}

/// The path to the value being read at `line` and `column` (1-based, as serde_json
/// counts them) of `text`, such as `to.zip` or `tags[1]`; empty at the root. At a key,
/// the path ends with that key.
pub(crate) fn path_at(text: &str, line: usize, column: usize) -> Path {
    path_before(text, offset(text, line, column))
}

/// The byte at `line` and `column` (1-based, as serde_json counts them) of `text`.
pub(crate) fn char_at(text: &str, line: usize, column: usize) -> Option<u8> {
    let at = offset(text, line, column).checked_sub(1)?;
    text.as_bytes().get(at).copied()
}

/// The byte offset just past `line` and `column` (1-based) of `text`.
fn offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column).min(text.len())
}

/// The path to the value being read at byte `end` of `text`.
fn path_before(text: &str, end: usize) -> Path {
    let mut steps: Vec<Step> = Vec::new();
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
                let start = at;
                at = string_end(bytes, start + 1);
                if expecting_key {
                    if let Some(Step::Key(key)) = steps.last_mut() {
                        // serde names the key as it reads, escapes resolved.
                        *key = text
                            .get(start..=at)
                            .and_then(|quoted| serde_json::from_str(quoted).ok());
                    }
                    expecting_key = false;
                }
            }
            _ => {}
        }
        at += 1;
    }
    steps
        .into_iter()
        .filter_map(|step| match step {
            Step::Key(key) => key.map(Segment::Key),
            Step::Index(index) => Some(Segment::Index(index)),
        })
        .collect()
}

/// The message for serde's "unknown field" and "missing field" errors, naming the key
/// by its whole path, `object` (the object's path) joined with the key: `unknown key
/// `to.colour` (expected one of `city`, `zip`)`. `None` for any other error.
pub(crate) fn key_error(object: &[Segment], reason: &str) -> Option<String> {
    let join = |key: &str| {
        let mut path = object.to_vec();
        path.push(Segment::Key(key.to_owned()));
        display(&path)
    };
    if let Some(rest) = reason.strip_prefix("missing field `") {
        let key = join(rest.strip_suffix('`')?);
        return Some(format!(
            "invalid arguments: missing key `{key}`: the schema requires every key it lists; send null to leave out one that may be null"
        ));
    }
    let (key, expected) = unknown_key(reason)?;
    let expected = match expected {
        "there are no fields" => "the object takes no keys",
        expected => expected,
    };
    Some(format!(
        "invalid arguments: unknown key `{}` ({expected}); the schema allows no other keys",
        join(key)
    ))
}

/// The key and the expected keys of serde's "unknown field" error: the key may hold
/// "`, " itself, so it ends at the last "`, expected".
pub(crate) fn unknown_key(reason: &str) -> Option<(&str, &str)> {
    let rest = reason.strip_prefix("unknown field `")?;
    if let Some(key) = rest.strip_suffix("`, there are no fields") {
        return Some((key, "there are no fields"));
    }
    let (key, _) = rest.rsplit_once("`, expected")?;
    Some((key, &rest[key.len() + "`, ".len()..]))
}

/// The key that follows where serde_json stopped (at `line` and `column`) when that is a
/// comma and then a key in the same object, with the object's path: an object that must
/// end after one key (an externally tagged enum's) holds another.
pub(crate) fn key_after(text: &str, line: usize, column: usize) -> Option<(Path, String)> {
    // serde_json stops at the last character it consumed, the end of the variant's
    // value, and reports the next one it found (the comma) from there.
    let stop = offset(text, line, column);
    let bytes = text.as_bytes();
    // An empty object where a variant was due stops serde_json past its `}`: the comma
    // that follows is its neighbour's, not the enum's.
    let before = text.get(..stop)?.trim_end();
    if before.ends_with('}') && before[..before.len() - 1].trim_end().ends_with('{') {
        return None;
    }
    let comma = stop + text.get(stop..)?.find(|c: char| !c.is_whitespace())?;
    if bytes[comma] != b',' {
        return None;
    }
    let quote = comma + 1 + text.get(comma + 1..)?.find(|c: char| !c.is_whitespace())?;
    if bytes[quote] != b'"' {
        return None;
    }
    let mut object = path_before(text, comma);
    // Inside an object, the path ends with the key of the member just read.
    let Some(Segment::Key(_)) = object.pop() else {
        return None;
    };
    let key = serde_json::from_str(text.get(quote..=string_end(bytes, quote + 1))?).ok()?;
    Some((object, key))
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
        display(&path_at(text, error.line(), error.column()))
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
    fn a_key_is_named_as_it_reads_with_its_escapes_resolved() {
        let text = r#"{"to": {"city": "Rome", "z\"i\u0070": "x"}, "tags": []}"#;
        assert_eq!(
            key_error(&path_at(text, 1, 36)[..1], r#"unknown field `z"ip`, expected `city` or `zip`"#),
            Some(r#"invalid arguments: unknown key `to.z"ip` (expected `city` or `zip`); the schema allows no other keys"#.to_owned())
        );
        assert_eq!(display(&path_at(text, 1, 36)), r#"to.z"ip"#);
    }

    #[test]
    fn a_key_holding_a_backquote_and_comma_is_named_whole() {
        let reason = "unknown field `a`, b`, expected `city` or `zip`";
        assert_eq!(
            unknown_key(reason),
            Some(("a`, b", "expected `city` or `zip`"))
        );
        let reason = "unknown field `a`, b`, there are no fields";
        assert_eq!(unknown_key(reason), Some(("a`, b", "there are no fields")));
    }

    #[test]
    fn quotes_brackets_and_commas_inside_strings_are_not_structure() {
        let text = r#"{"tags": ["a,\"]}{", "[b]"], "to": {"city": "x\"y,z", "zip": true}}"#;
        assert_eq!(path_of_error::<Parcel>(text), "to.zip");
    }
}
