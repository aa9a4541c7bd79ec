//! The engine of a binary that links the two example plugins, and engines built by hand
//! from descriptors that break the start-up rules.

use acme_crm as _;
use engine_core::config::EngineConfig;
use engine_core::{Call, CallErrorKind, Engine, EngineError, Rule, StartupError};
use plugin_sdk::engine::{
    Catalogue, Needs, PluginManifest, StateBuilder, StateType, System, ToolDescriptor,
};
use weather as _;

fn linked_tool(id: &str) -> &'static ToolDescriptor {
    plugin_sdk::engine::linked_tools()
        .find(|tool| tool.id() == id)
        .unwrap_or_else(|| panic!("no linked tool `{id}`"))
}

/// The start-up problems of an engine serving `tools`, which `engine config check`
/// (the builder's `check`) reports the same.
fn refused(tools: Vec<&'static ToolDescriptor>) -> StartupError {
    let error = match Engine::builder().tools(tools.clone()).build() {
        Err(EngineError::Startup(error)) => error,
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("the engine started"),
    };
    match Engine::builder().tools(tools).check() {
        Err(EngineError::Startup(checked)) => assert_eq!(checked, error),
        other => panic!("the check did not refuse the same: {:?}", other.err()),
    }
    error
}

#[test]
fn linked_plugins_and_tools_are_collected_sorted() {
    let engine = Engine::builder()
        .build()
        .expect("the example plugins are valid");
    let listing: Vec<(&str, Vec<&str>)> = engine
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

#[tokio::test]
async fn a_tool_is_found_by_id_and_by_wire_name_and_nothing_else() {
    let config = EngineConfig::parse("[agents.a]\n").unwrap();
    let engine = Engine::builder().config(config).build().unwrap();
    let turn = engine.turn("a").unwrap();
    let arguments = r#"{"patient_id": "p-1", "date": "2026-12-01", "note": null}"#;
    let by_id = engine
        .call(&turn, Call::new("acme:book_appointment", arguments))
        .await
        .unwrap();
    let by_wire = engine
        .call(&turn, Call::new("acme__book_appointment", arguments))
        .await
        .unwrap();
    assert_eq!(by_id, by_wire, "one tool under both names");
    let tool = engine.tool("acme:book_appointment").unwrap();
    assert!(std::ptr::eq(
        tool,
        engine.tool("acme__book_appointment").unwrap()
    ));
    assert_eq!(tool.wire_name(), "acme__book_appointment");
    for miss in [
        "book_appointment",
        "acme.book_appointment",
        "ACME__book_appointment",
        "",
    ] {
        let error = engine
            .call(&turn, Call::new(miss, arguments))
            .await
            .expect_err(miss);
        assert_eq!(error.kind(), CallErrorKind::UnknownTool, "{miss}");
        assert!(engine.tool(miss).is_none(), "{miss}");
    }
}

static ACME_TWICE: PluginManifest = PluginManifest {
    namespace: "acme",
    package: "acme-crm-fork",
    version: "0.3.0",
    engine: ">=0.1",
    display_name: None,
    description: None,
    api_version: None,
    state: None,
    system: System::NONE,
    catalogue: Catalogue::NONE,
    oauth: &[],
};

static FUTURE: PluginManifest = PluginManifest {
    namespace: "engine",
    package: "from-the-future",
    version: "1.0.0",
    engine: ">=7",
    display_name: None,
    description: None,
    api_version: None,
    state: None,
    system: System::NONE,
    catalogue: Catalogue::NONE,
    oauth: &[],
};

static UNVERSIONED: PluginManifest = PluginManifest {
    namespace: "unversioned",
    package: "unversioned-actions",
    version: "0.1.0",
    engine: ">=0.1",
    display_name: None,
    description: None,
    api_version: None,
    state: None,
    system: System::NONE,
    catalogue: Catalogue::NONE,
    oauth: &[],
};

#[test]
fn a_plugin_with_an_action_and_no_api_version_is_refused() {
    let weather = linked_tool("weather:weather");
    let action = leak(ToolDescriptor {
        name: "act",
        plugin: || &UNVERSIONED,
        staged: Some(|_| Ok(())),
        ..*weather
    });
    let error = refused(vec![action]);
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::ApiVersion);
    assert_eq!(problem.plugin, "unversioned-actions 0.1.0");
    assert_eq!(
        problem.message,
        "the plugin defines 1 action(s) and 0 channel(s) but declares no `api_version`"
    );
    assert!(problem.fix.contains("api_version = N"), "{error}");
}

static STATEFUL: PluginManifest = PluginManifest {
    namespace: "stateful",
    package: "stateful",
    version: "0.1.0",
    engine: ">=0.1",
    display_name: None,
    description: None,
    api_version: None,
    state: Some(&StateBuilder::of::<Counter>()),
    system: System::NONE,
    catalogue: Catalogue::NONE,
    oauth: &[],
};

/// A plugin's state, for the tools of `STATEFUL`.
struct Counter;

impl plugin_sdk::shared::PluginState for Counter {
    type Settings = CounterSettings;

    fn build(_: CounterSettings) -> Result<Self, String> {
        Ok(Counter)
    }
}

#[derive(serde::Deserialize)]
struct CounterSettings {}

#[test]
fn a_tool_sharing_a_state_that_is_not_its_plugins_is_refused() {
    let weather = linked_tool("weather:weather");
    let takes = |plugin: fn() -> &'static PluginManifest, state: StateType| {
        leak(ToolDescriptor {
            plugin,
            needs: Needs {
                state: Some(state),
                ..weather.needs
            },
            ..*weather
        })
    };
    // Its own plugin's state: fine.
    assert!(Engine::builder()
        .tools([takes(|| &STATEFUL, StateType::of::<Counter>())])
        .build()
        .is_ok());
    for (plugin, declared) in [
        (
            (|| &STATEFUL) as fn() -> &'static PluginManifest,
            "its plugin's state is `linked::registry::Counter`",
        ),
        (|| &UNVERSIONED, "its plugin declares no state"),
    ] {
        // Another plugin's state: a real one, which a check asking only "is this some
        // plugin's state?" would let through.
        let error = refused(vec![takes(plugin, StateType::of::<acme_crm::Crm>())]);
        let [problem] = error.problems() else {
            panic!("one problem expected: {error}");
        };
        assert_eq!(problem.rule, Rule::PluginState);
        assert_eq!(
            problem.message,
            format!("the tool takes `Shared<acme_crm::Crm>`, and {declared}")
        );
        assert!(problem.fix.contains("plugin! { state = "), "{error}");
    }
}

static FAST: PluginManifest = PluginManifest {
    namespace: "fast",
    package: "fast-mode",
    version: "0.2.0",
    engine: ">=0.1",
    display_name: None,
    description: None,
    api_version: None,
    state: None,
    system: System {
        debian: &["ca-certificates"],
        env: &[("MODE", "fast")],
    },
    catalogue: Catalogue::NONE,
    oauth: &[],
};

static SAFE: PluginManifest = PluginManifest {
    namespace: "safe",
    package: "safe-mode",
    version: "0.3.0",
    system: System {
        debian: &["ca-certificates"],
        env: &[("MODE", "safe")],
    },
    ..FAST
};

#[test]
fn two_plugins_giving_one_variable_two_defaults_are_refused_naming_both() {
    let weather = linked_tool("weather:weather");
    let of = |plugin: fn() -> &'static PluginManifest, name: &'static str| {
        leak(ToolDescriptor {
            plugin,
            name,
            ..*weather
        })
    };
    let error = refused(vec![of(|| &FAST, "go"), of(|| &SAFE, "stop")]);
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::SystemEnv);
    assert_eq!(problem.plugin, "safe-mode 0.3.0");
    assert_eq!(
        problem.message,
        "the variable `MODE` has different defaults: fast-mode 0.2.0 declares \"fast\", safe-mode 0.3.0 declares \"safe\""
    );
    assert!(
        problem.fix.contains("set it in the image's environment"),
        "{error}"
    );
}

fn leak(descriptor: ToolDescriptor) -> &'static ToolDescriptor {
    Box::leak(Box::new(descriptor))
}

#[test]
fn every_problem_is_reported_at_once_in_a_stable_order() {
    let weather = linked_tool("weather:weather");
    // A plugin comes along with its tools: `FUTURE` with `list_files`.
    let list_files = leak(ToolDescriptor {
        name: "list_files",
        plugin: || &FUTURE,
        ..*weather
    });

    let error = refused(vec![list_files, weather]);
    let again = refused(vec![weather, list_files]);
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
    // `ACME_TWICE` comes along with a tool of its own, beside every linked tool.
    let fork_tool = leak(ToolDescriptor {
        name: "fork_only",
        plugin: || &ACME_TWICE,
        ..*linked_tool("weather:weather")
    });
    let error = refused(
        plugin_sdk::engine::linked_tools()
            .chain([fork_tool])
            .collect(),
    );
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::NamespaceTaken);
    assert!(
        problem.message.contains("also declared by acme-crm 0.1.0"),
        "{error}"
    );
}

#[test]
fn choosing_tools_keeps_the_linked_hooks_and_choosing_hooks_keeps_the_linked_tools() {
    use plugin_sdk::hook::Event;
    // acme-crm links a `message_received` hook beside its tools.
    let linked_hooks = plugin_sdk::engine::linked_hooks().count();
    assert!(linked_hooks > 0);
    let weather_only = Engine::builder()
        .tools([linked_tool("weather:weather")])
        .build()
        .unwrap();
    assert_eq!(weather_only.tools().len(), 1);
    let hooks: usize = Event::ALL
        .iter()
        .map(|&event| weather_only.hooks(event).len())
        .sum();
    assert_eq!(hooks, linked_hooks);

    let no_hooks = Engine::builder().hooks([]).build().unwrap();
    assert_eq!(
        no_hooks.tools().len(),
        plugin_sdk::engine::linked_tools().count()
    );
    assert!(Event::ALL
        .iter()
        .all(|&event| no_hooks.hooks(event).is_empty()));
}

#[test]
#[should_panic(expected = "a Turn was used with an Engine other than the one that made it")]
fn a_turn_belongs_to_the_engine_that_made_it() {
    let config = EngineConfig::parse("[agents.a]\n[agents.b]\n").unwrap();
    let mine = Engine::builder().config(config).build().unwrap();
    let other = Engine::builder().build().unwrap();
    let turn = mine.turn("b").unwrap();
    let call = other.call(&turn, Call::new("weather__weather", "{}"));
    let _ = futures::executor::block_on(call);
}

static VERSIONED: PluginManifest = PluginManifest {
    namespace: "versioned",
    package: "versioned-actions",
    api_version: Some(0),
    system: System::NONE,
    ..FAST
};

#[test]
fn a_hand_made_action_that_reads_the_history_is_refused_and_one_that_reads_where_it_runs_is_not() {
    let weather = linked_tool("weather:weather");
    let action = |name: &'static str, needs: Needs| {
        leak(ToolDescriptor {
            name,
            plugin: || &VERSIONED,
            staged: Some(|_| Ok(())),
            needs,
            ..*weather
        })
    };
    let reads_history = Needs {
        conversation: true,
        history: true,
        ..Needs::NOTHING
    };
    let error = refused(vec![action("recaps", reads_history)]);
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::ActionShape);
    assert!(
        problem
            .message
            .contains("it reads the conversation's history"),
        "{error}"
    );
    // The instance, the agent and the channel cannot change what it does.
    let reads_identity = Needs {
        identity: true,
        ..Needs::NOTHING
    };
    assert!(Engine::builder()
        .tools([action("keyed", reads_identity)])
        .build()
        .is_ok());
}
