//! The registry of a binary that links the two example plugins, and registries built by
//! hand from descriptors that break the start-up rules.

use acme_crm as _;
use engine_core::{Linked, Registry, Rule};
use plugin_sdk::{PluginManifest, ToolDescriptor};
use weather as _;

fn linked_tool(id: &str) -> &'static ToolDescriptor {
    plugin_sdk::linked_tools()
        .find(|tool| tool.id() == id)
        .unwrap_or_else(|| panic!("no linked tool `{id}`"))
}

#[test]
fn linked_plugins_and_tools_are_collected_sorted() {
    let registry = Registry::linked().expect("the example plugins are valid");
    let listing: Vec<(&str, Vec<&str>)> = registry
        .plugins()
        .map(|(plugin, tools)| {
            (
                plugin.namespace,
                tools.iter().map(|tool| tool.id()).collect(),
            )
        })
        .collect();
    assert_eq!(
        listing,
        [
            (
                "acme",
                vec![
                    "acme:book_appointment",
                    "acme:contact_card",
                    "acme:find_orders"
                ]
            ),
            ("weather", vec!["weather:weather"])
        ]
    );
}

#[test]
fn a_tool_is_found_by_id_and_by_wire_name_and_nothing_else() {
    let registry = Registry::linked().unwrap();
    let by_id = registry.tool("acme:book_appointment").unwrap();
    let by_wire = registry.tool("acme__book_appointment").unwrap();
    assert!(std::ptr::eq(by_id, by_wire));
    assert_eq!(by_id.wire_name(), "acme__book_appointment");
    for miss in [
        "book_appointment",
        "acme.book_appointment",
        "ACME__book_appointment",
        "",
    ] {
        assert!(registry.tool(miss).is_none(), "{miss}");
    }
}

static ACME_TWICE: PluginManifest = PluginManifest {
    namespace: "acme",
    package: "acme-crm-fork",
    version: "0.3.0",
    engine: ">=0.1",
    display_name: None,
    description: None,
};

static FUTURE: PluginManifest = PluginManifest {
    namespace: "engine",
    package: "from-the-future",
    version: "1.0.0",
    engine: ">=7",
    display_name: None,
    description: None,
};

#[test]
fn every_problem_is_reported_at_once_in_a_stable_order() {
    let weather = linked_tool("weather:weather");
    let leak = |descriptor: ToolDescriptor| &*Box::leak(Box::new(descriptor));
    let linked = Linked {
        plugins: vec![&ACME_TWICE, &FUTURE],
        tools: vec![
            leak(ToolDescriptor {
                name: "list_files",
                plugin: || &FUTURE,
                ..*weather
            }),
            weather,
        ],
        hooks: Vec::new(),
    };
    let mut shuffled = linked.clone();
    shuffled.plugins.reverse();
    shuffled.tools.reverse();

    let error = Registry::build(linked)
        .err()
        .expect("the registry is refused");
    let again = Registry::build(shuffled).err().unwrap();
    assert_eq!(error, again, "link order must not change the report");

    let rules: Vec<(Rule, &str)> = error
        .problems()
        .iter()
        .map(|problem| (problem.rule, problem.plugin.as_str()))
        .collect();
    assert_eq!(
        rules,
        [
            (Rule::ReservedName, "from-the-future 1.0.0"),
            (Rule::EngineVersion, "from-the-future 1.0.0"),
            (Rule::ReservedName, "from-the-future 1.0.0"),
        ]
    );
    let report = error.to_string();
    assert!(
        report.starts_with("the engine refused to start: 3 problems"),
        "{report}"
    );
    assert!(report.contains("needs engine `>=7`"), "{report}");
    assert!(
        report.contains("`engine` is kept for the engine"),
        "{report}"
    );
    assert!(report.contains("tool `engine:list_files`"), "{report}");
    assert!(report.contains("fix: "), "{report}");
}

#[test]
fn two_plugins_claiming_one_namespace_are_refused() {
    let linked = Linked {
        plugins: Linked::from_inventory()
            .plugins
            .into_iter()
            .chain([&ACME_TWICE])
            .collect(),
        ..Linked::default()
    };
    let error = Registry::build(linked).err().expect("refused");
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::NamespaceTaken);
    assert!(
        problem.message.contains("also declared by acme-crm 0.1.0"),
        "{error}"
    );
}
