//! What a configuration error suggests: the nearest of the names or keys that would do,
//! the known confusions, and a list that reads naturally when it is empty.

use std::fmt::Display;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::{AgentConfig, ChannelConfig, EngineConfig, ProviderConfig, TurnConfig};

/// "did you mean `x`? " for the nearest of `names` to `name`, or nothing when none is
/// near: at most a quarter of the name's characters differ (at least one), as a typo
/// does (a third took `builtin:delete_file` for `builtin:list_files`).
pub(crate) fn did_you_mean<T: AsRef<str>>(
    name: &str,
    names: impl IntoIterator<Item = T>,
) -> String {
    let most = (name.chars().count() / 4).max(1);
    names
        .into_iter()
        .map(|candidate| {
            let candidate = candidate.as_ref().to_owned();
            (strsim::damerau_levenshtein(name, &candidate), candidate)
        })
        .filter(|(distance, candidate)| *distance <= most && candidate != name)
        .min()
        .map(|(_, candidate)| format!("did you mean `{candidate}`? "))
        .unwrap_or_default()
}

/// The fix for `name`, which is none of `names`: the nearest of them, then `listed`
/// given the names as "`a`, `b`", or `none` in words when there are none ("name one of
/// none" reads as a riddle).
pub(crate) fn fix_for_unknown<T: Display>(
    name: &str,
    names: impl IntoIterator<Item = T>,
    listed: impl FnOnce(&str) -> String,
    none: &str,
) -> String {
    let names: Vec<String> = names.into_iter().map(|name| name.to_string()).collect();
    if names.is_empty() {
        return none.to_owned();
    }
    let hint = did_you_mean(name, &names);
    let names: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    format!("{hint}{}", listed(&names.join(", ")))
}

/// Keys written for another, each with its fix: (the section's path with `*` for a
/// name, the key, the fix).
const CONFUSIONS: &[(&str, &str, &str)] = &[
    (
        "providers.*",
        "api_key",
        "a key is a secret, never in this file: name the secret that holds it with `api_key_secret = \"...\"`, and give its value as an agent's secret (`ENGINE_SECRET__<agent>__<secret>`)",
    ),
    (
        "agents.*",
        "provider",
        "an agent's provider is in its turn: write it as `[agents.<name>.turn] provider = \"...\"`",
    ),
    (
        "agents.*",
        "api_key",
        "a key is a secret of the agent: give it as `secrets = { <secret> = \"...\" }` or `ENGINE_SECRET__<agent>__<secret>`, and name that secret in the provider's `api_key_secret`",
    ),
];

/// The fix for the unknown `key` (dotted): a known confusion's, else the nearest key of
/// its table, else the general one.
pub(crate) fn unknown_key_fix(key: &str) -> String {
    let (table, last) = key.rsplit_once('.').unwrap_or(("", key));
    let shape = section_shape(table);
    if let Some((.., fix)) = CONFUSIONS
        .iter()
        .find(|(section, name, _)| *section == shape && *name == last)
    {
        return (*fix).to_owned();
    }
    let hint = known_keys(&shape)
        .map(|keys| did_you_mean(last, keys.iter()))
        .unwrap_or_default();
    format!("{hint}correct its spelling or remove it (the engine's keys are in the documentation of `EngineConfig`)")
}

/// The table's path with each user-given name as `*`: `agents.support.turn` is
/// `agents.*.turn`.
fn section_shape(table: &str) -> String {
    let parts: Vec<&str> = if table.is_empty() {
        Vec::new()
    } else {
        table.split('.').collect()
    };
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let named = i == 1 && matches!(parts[0], "agents" | "providers" | "channels");
            if named {
                "*"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The keys a table of this shape takes, as its type's `Deserialize` names them: read
/// from serde's derive, never written out here.
fn known_keys(shape: &str) -> Option<&'static [&'static str]> {
    match shape {
        "" => fields::<EngineConfig>(),
        "agents.*" => fields::<AgentConfig>(),
        "agents.*.turn" => fields::<TurnConfig>(),
        "providers.*" => fields::<ProviderConfig>(),
        "channels.*" => fields::<ChannelConfig>(),
        _ => None,
    }
}

/// The fields `T`'s derived `Deserialize` passes to `deserialize_struct`.
fn fields<'de, T: Deserialize<'de>>() -> Option<&'static [&'static str]> {
    let mut probe = FieldsProbe(None);
    let _ = T::deserialize(&mut probe);
    probe.0
}

/// A deserializer that holds no data: it records the fields a struct asks for, and
/// answers every request with an error.
struct FieldsProbe(Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for &mut FieldsProbe {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("a probe holds no data"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = Some(fields);
        Err(de::Error::custom("a probe holds no data"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_met_with_the_nearest_name_and_a_stranger_with_none() {
        let names = ["weather:forecast", "acme:order_status"];
        assert_eq!(
            did_you_mean("weather:forcast", names),
            "did you mean `weather:forecast`? "
        );
        assert_eq!(did_you_mean("calendar:book", names), "");
        assert_eq!(did_you_mean("x", ["y"]), "did you mean `y`? ");
        // At most a quarter of the characters differ: two of eight do, three do not.
        assert_eq!(
            did_you_mean("abcdefgh", ["abcdefxy"]),
            "did you mean `abcdefxy`? "
        );
        assert_eq!(did_you_mean("abcdefgh", ["abcdexyz"]), "");
        assert_eq!(
            did_you_mean("builtin:delete_file", ["builtin:list_files"]),
            ""
        );
    }

    #[test]
    fn an_empty_list_is_said_in_words() {
        let fix = |names: &[&str]| {
            fix_for_unknown(
                "openia",
                names.iter(),
                |names| format!("name one of {names}"),
                "no provider is configured",
            )
        };
        assert_eq!(fix(&[]), "no provider is configured");
        assert_eq!(
            fix(&["openai", "local"]),
            "did you mean `openai`? name one of `openai`, `local`"
        );
    }

    #[test]
    fn the_keys_of_each_section_come_from_its_type() {
        assert!(known_keys("").unwrap().contains(&"data_dir"));
        assert!(known_keys("agents.*").unwrap().contains(&"secrets"));
        assert!(known_keys("providers.*")
            .unwrap()
            .contains(&"api_key_secret"));
        assert!(known_keys("agents.*.turn").unwrap().contains(&"provider"));
        assert_eq!(section_shape("agents.support.turn"), "agents.*.turn");
        assert_eq!(section_shape(""), "");
    }

    #[test]
    fn an_unknown_key_gets_its_confusion_or_the_nearest_key() {
        assert!(unknown_key_fix("providers.openai.api_key").starts_with("a key is a secret"));
        assert!(
            unknown_key_fix("agents.support.api_key").starts_with("a key is a secret of the agent")
        );
        assert!(unknown_key_fix("agents.support.provider")
            .starts_with("an agent's provider is in its turn"));
        assert!(
            unknown_key_fix("agents.support.turn.provder").starts_with("did you mean `provider`? ")
        );
        assert!(unknown_key_fix("channels.webhook.agnt").starts_with("did you mean `agent`? "));
        assert!(unknown_key_fix("data_dirr").starts_with("did you mean `data_dir`? "));
        assert!(unknown_key_fix("agents.support.secrts").starts_with("did you mean `secrets`? "));
        assert!(unknown_key_fix("zzz").starts_with("correct its spelling"));
    }
}
