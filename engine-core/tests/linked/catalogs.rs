//! The catalogs of the example plugins, one per provider, from one definition.

use acme_crm as _;
use engine_core::{Engine, Format, Tool};
use plugin_sdk::engine::{Needs, ToolDescriptor};
use serde_json::{json, Value};
use weather as _;

fn engine() -> Engine {
    Engine::builder()
        .build()
        .expect("the example plugins are valid")
}

/// The linked tool called `name` on the wire.
fn linked<'e>(engine: &'e Engine, name: &str) -> &'e Tool {
    engine
        .tools()
        .iter()
        .find(|tool| tool.wire_name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("catalogs are JSON")
}

const NAMES: [&str; 4] = [
    "acme__book_appointment",
    "acme__contact_card",
    "acme__find_orders",
    "weather__weather",
];

/// Every value under a key named `key`, anywhere in `value`.
fn find_key<'a>(value: &'a Value, key: &str, found: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            if let Some(hit) = map.get(key) {
                found.push(hit);
            }
            map.values().for_each(|child| find_key(child, key, found));
        }
        Value::Array(items) => items.iter().for_each(|child| find_key(child, key, found)),
        _ => {}
    }
}

#[test]
fn openai_tools_are_strict_functions_named_on_the_wire() {
    let engine = engine();
    let catalog = parse(&engine.catalog(Format::OpenAi, "en-US"));
    let tools = catalog.as_array().unwrap();
    assert_eq!(tools.len(), 4);
    for (tool, name) in tools.iter().zip(NAMES) {
        assert_eq!(tool["type"], "function");
        let function = &tool["function"];
        assert_eq!(function["name"], name);
        assert_eq!(function["strict"], true);
        let canonical = linked(&engine, name);
        assert_eq!(function["description"], described(canonical));
        assert_eq!(function["parameters"], canonical.input_schema());
        assert_eq!(
            function.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["name", "description", "parameters", "strict"]
        );
    }
}

#[test]
fn anthropic_tools_carry_the_same_schema_as_input_schema() {
    let engine = engine();
    let catalog = parse(&engine.catalog(Format::Anthropic, "en-US"));
    assert_eq!(catalog.as_array().unwrap().len(), NAMES.len());
    for (tool, name) in catalog.as_array().unwrap().iter().zip(NAMES) {
        assert_eq!(tool["name"], name);
        assert_eq!(tool["input_schema"], linked(&engine, name).input_schema());
        assert_eq!(tool["strict"], true);
        // Anthropic has a field for examples, so its description is the tool's own.
        let canonical = linked(&engine, name).descriptor();
        assert_eq!(tool["description"], canonical.description);
        let examples: Vec<Value> = canonical
            .examples
            .iter()
            .map(|text| serde_json::from_str(text).unwrap())
            .collect();
        match examples.is_empty() {
            true => assert!(tool.get("input_examples").is_none(), "{tool}"),
            false => assert_eq!(tool["input_examples"], Value::from(examples)),
        }
    }
    // `weather` declares two examples, `contact_card` none.
    assert_eq!(catalog[3]["input_examples"][1]["city"], "Tokyo");
    assert!(catalog[1].get("input_examples").is_none());
}

/// The description a catalog without a field for examples shows: the tool's own, then
/// its examples in the documented format.
fn described(tool: &Tool) -> String {
    let descriptor = tool.descriptor();
    if descriptor.examples.is_empty() {
        return descriptor.description.to_owned();
    }
    let lines: Vec<String> = descriptor
        .examples
        .iter()
        .map(|example| format!("- {example}"))
        .collect();
    format!(
        "{}\n\nExamples of arguments:\n{}",
        descriptor.description.trim_end(),
        lines.join("\n")
    )
}

#[test]
fn catalogs_without_a_field_for_examples_append_them_to_the_description() {
    let engine = engine();
    let weather = linked(&engine, "weather__weather");
    let expected = described(weather);
    assert!(
        expected.ends_with(
            "\n\nExamples of arguments:\n- {\"city\":\"Rome\",\"days\":3,\"units\":null}\n- {\"city\":\"Tokyo\",\"days\":1,\"units\":\"fahrenheit\"}"
        ),
        "{expected}"
    );
    let openai = parse(&engine.catalog(Format::OpenAi, "en-US"));
    assert_eq!(openai[3]["function"]["description"], expected);
    let gemini = parse(&engine.catalog(Format::Gemini, "en-US"));
    assert_eq!(
        gemini[0]["functionDeclarations"][3]["description"],
        expected
    );
    let mcp = parse(&engine.catalog(Format::Mcp, "en-US"));
    let mcp_weather = mcp["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "weather__weather")
        .unwrap();
    assert_eq!(mcp_weather["description"], expected);
    // A tool without examples keeps its description as written.
    let card = linked(&engine, "acme__contact_card");
    assert_eq!(
        openai[1]["function"]["description"],
        card.descriptor().description
    );
}

#[test]
fn gemini_declarations_stay_inside_its_schema_subset() {
    let catalog = parse(&engine().catalog(Format::Gemini, "en-US"));
    let declarations = catalog[0]["functionDeclarations"].as_array().unwrap();
    let names: Vec<&Value> = declarations.iter().map(|d| &d["name"]).collect();
    assert_eq!(names, NAMES);
    for key in [
        "additionalProperties",
        "$defs",
        "$ref",
        "const",
        "oneOf",
        "strict",
    ] {
        let mut found = Vec::new();
        find_key(&catalog, key, &mut found);
        assert!(
            found.is_empty(),
            "`{key}` is outside Gemini's subset: {found:?}"
        );
    }
    let mut types = Vec::new();
    find_key(&catalog, "type", &mut types);
    assert!(
        types.iter().all(|kind| kind.is_string()),
        "one type per value: {types:?}"
    );
    let state = &declarations[2]["parameters"]["properties"]["state"];
    assert_eq!(
        *state,
        json!({
            "type": "string",
            "enum": ["received", "shipped", "delivered", "returned"],
            "description": "Only orders in this state; null for every state.",
            "nullable": true
        })
    );
    assert_eq!(
        declarations[3]["parameters"]["propertyOrdering"],
        json!(["city", "days", "units"])
    );
}

#[test]
fn mcp_tools_have_localized_titles_annotations_and_object_output_schemas() {
    let engine = engine();
    let english = parse(&engine.catalog(Format::Mcp, "en-US"));
    let italian = parse(&engine.catalog(Format::Mcp, "it-IT"));
    let book = &english["tools"][0];
    assert_eq!(book["name"], "acme__book_appointment");
    assert_eq!(book["title"], "Books an appointment in the CRM.");
    assert_eq!(
        italian["tools"][0]["title"],
        "Prenota un appuntamento nel CRM."
    );
    assert_eq!(
        book["description"], italian["tools"][0]["description"],
        "descriptions are for the model, never translated"
    );
    assert_eq!(book["annotations"], json!({ "idempotentHint": true }));
    assert_eq!(book["outputSchema"]["type"], "object");
    // `find_orders` returns a list: MCP's structured content is an object, so no schema.
    let mcp_tool = |name: &str| {
        english["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .cloned()
    };
    let orders = mcp_tool("acme__find_orders").unwrap();
    assert!(orders.get("outputSchema").is_none(), "{orders}");
    // `contact_card` reads the conversation's subscriber: an MCP session has no
    // conversation, so MCP's catalog leaves it out.
    assert!(mcp_tool("acme__contact_card").is_none(), "{english}");
    // Its hints as MCP renders them, through a copy that reads no conversation.
    let contact_card = linked(&engine, "acme__contact_card").descriptor();
    let sessionless: &'static ToolDescriptor = Box::leak(Box::new(ToolDescriptor {
        needs: Needs::NOTHING,
        secrets: &[],
        ..*contact_card
    }));
    let alone = Engine::builder().tools([sessionless]).build().unwrap();
    let rendered: Value = serde_json::from_slice(&alone.catalog(Format::Mcp, "en-US")).unwrap();
    assert_eq!(
        rendered["tools"][0]["annotations"],
        json!({ "readOnlyHint": true, "openWorldHint": true })
    );
    assert_eq!(
        mcp_tool("weather__weather").unwrap()["annotations"],
        json!({ "readOnlyHint": true, "idempotentHint": true })
    );
}

#[test]
fn serving_a_rendered_catalog_hands_out_the_same_bytes() {
    let engine = engine();
    for format in Format::ALL {
        let first = engine.catalog(format, "it-IT");
        let second = engine.catalog(format, "it-IT");
        assert_eq!(
            first.as_ptr(),
            second.as_ptr(),
            "{format} was rendered twice"
        );
    }
    // Locales that resolve every title alike share one rendering, so clients cannot
    // grow the cache by sending new tags.
    let swiss = engine.catalog(Format::Mcp, "it-CH");
    let italian = engine.catalog(Format::Mcp, "it-IT");
    assert_eq!(swiss.as_ptr(), italian.as_ptr());
    let english = engine.catalog(Format::Mcp, "en-US");
    let unknown = engine.catalog(Format::Mcp, "xx-unknown");
    assert_eq!(english.as_ptr(), unknown.as_ptr());
    assert_ne!(english.as_ptr(), italian.as_ptr());
}

#[test]
fn formats_parse_from_their_command_line_names() {
    for format in Format::ALL {
        assert_eq!(format.as_str().parse::<Format>(), Ok(format));
    }
    let error = "openapi".parse::<Format>().unwrap_err().to_string();
    assert!(
        error.contains("openai, anthropic, gemini or mcp"),
        "{error}"
    );
}
