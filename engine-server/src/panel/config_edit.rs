//! A tool switched on or off for an agent, written into the configuration's text with
//! `toml_edit`, so that its comments, order and layout stay as the operator wrote them.

use toml_edit::{Array, DocumentMut, Item, Table, Value};

/// `text` with `tool` enabled or not in `agents.<agent>.tools`. Without a list the agent
/// enables every tool: switching one off writes the list of the tools it `equips` but
/// that one (a tool it leaves out for want of a secret would make the list invalid).
/// Answers `None` when nothing changes.
pub(crate) fn switch_tool(
    text: &str,
    agent: &str,
    tool: &str,
    enabled: bool,
    equips: &[&str],
) -> Result<Option<String>, String> {
    let mut document: DocumentMut = text
        .parse()
        .map_err(|error| format!("the configuration file does not parse: {error}"))?;
    let agents = document
        .entry("agents")
        .or_insert_with(implicit_table)
        .as_table_like_mut()
        .ok_or("`agents` in the configuration file is not a table")?;
    let agent_table = agents
        .entry(agent)
        .or_insert(Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| format!("`agents.{agent}` in the configuration file is not a table"))?;
    let Some(tools) = agent_table.get_mut("tools") else {
        if enabled {
            return Ok(None);
        }
        let others: Array = equips.iter().copied().filter(|id| *id != tool).collect();
        agent_table.insert("tools", Item::Value(Value::Array(others)));
        return Ok(Some(document.to_string()));
    };
    let list = tools
        .as_array_mut()
        .ok_or_else(|| format!("`agents.{agent}.tools` in the configuration file is not a list"))?;
    let listed = list.iter().any(|id| id.as_str() == Some(tool));
    match (enabled, listed) {
        (true, false) => list.push(tool),
        (false, true) => list.retain(|id| id.as_str() != Some(tool)),
        _ => return Ok(None),
    }
    Ok(Some(document.to_string()))
}

/// A table that has no header of its own (`[agents.bot.turn]` alone makes `agents`
/// one).
fn implicit_table() -> Item {
    let mut table = Table::new();
    table.set_implicit(true);
    Item::Table(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINKED: [&str; 3] = ["notes:add", "notes:list", "weather:weather"];

    #[test]
    fn switching_off_without_a_list_lists_every_other_tool_and_keeps_comments() {
        let text = "# the engine\ndata_dir = \"/tmp/x\" # here\n\n[agents.bot.turn]\n# the mock\nprovider = \"mock\"\n";
        let written = switch_tool(text, "bot", "notes:list", false, &LINKED)
            .unwrap()
            .unwrap();
        assert!(written.contains("# the engine\n"), "{written}");
        assert!(
            written.contains("data_dir = \"/tmp/x\" # here"),
            "{written}"
        );
        assert!(
            written.contains("# the mock\nprovider = \"mock\""),
            "{written}"
        );
        let parsed: toml::Table = written.parse().unwrap();
        assert_eq!(
            parsed["agents"]["bot"]["tools"],
            toml::Value::Array(vec!["notes:add".into(), "weather:weather".into()])
        );
        assert_eq!(
            parsed["agents"]["bot"]["turn"]["provider"].as_str(),
            Some("mock")
        );
    }

    #[test]
    fn a_listed_tool_is_removed_and_an_unlisted_one_added_in_place() {
        let text = "[agents.bot]\n# what it may use\ntools = [\"notes:add\", \"weather:weather\"] # two\nknowledge = \"read\"\n";
        let off = switch_tool(text, "bot", "notes:add", false, &LINKED)
            .unwrap()
            .unwrap();
        assert!(off.contains("# what it may use\ntools = ["), "{off}");
        assert!(off.contains("# two\nknowledge = \"read\""), "{off}");
        let parsed: toml::Table = off.parse().unwrap();
        assert_eq!(
            parsed["agents"]["bot"]["tools"],
            toml::Value::Array(vec!["weather:weather".into()])
        );
        let on = switch_tool(&off, "bot", "notes:list", true, &LINKED)
            .unwrap()
            .unwrap();
        let parsed: toml::Table = on.parse().unwrap();
        assert_eq!(
            parsed["agents"]["bot"]["tools"],
            toml::Value::Array(vec!["weather:weather".into(), "notes:list".into()])
        );
    }

    #[test]
    fn a_switch_to_the_state_it_is_in_changes_nothing() {
        let text = "[agents.bot]\ntools = [\"notes:add\"]\n";
        assert_eq!(
            switch_tool(text, "bot", "notes:add", true, &LINKED),
            Ok(None)
        );
        assert_eq!(
            switch_tool(text, "bot", "notes:list", false, &LINKED),
            Ok(None)
        );
        assert_eq!(switch_tool("", "bot", "notes:add", true, &LINKED), Ok(None));
    }

    #[test]
    fn a_file_of_another_shape_is_refused_saying_where() {
        let refused = switch_tool(
            "[agents.bot]\ntools = \"all\"\n",
            "bot",
            "notes:add",
            false,
            &LINKED,
        );
        assert_eq!(
            refused,
            Err("`agents.bot.tools` in the configuration file is not a list".to_owned())
        );
        assert!(switch_tool("agents = 3\n", "bot", "notes:add", false, &LINKED).is_err());
        assert!(switch_tool("[agents\n", "bot", "notes:add", false, &LINKED).is_err());
    }
}
