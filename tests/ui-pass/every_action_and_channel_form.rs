//! Every form an action's arguments and parameters may take, and a channel.
// A compile check: the arguments' fields shape the schemas, and nothing reads them.
#![allow(dead_code)]

use plugin_sdk::channel::{Channel, ChannelRequest, ChannelResponse, FinishedTurn, Inbound};
use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", api_version = 0 }

/// An enum without fields holds no text: no `#[tool_args(action)]` needed.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    Interested,
    CallBack,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
enum Follow {
    Call { in_days: u8 },
    Nothing,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
struct Window {
    /// First day, 0 to 6.
    from: u8,
    /// Last day, 0 to 6.
    to: u8,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
struct Args {
    /// How it went.
    outcome: Outcome,
    /// What next.
    follow: Follow,
    /// When to call.
    window: Option<Window>,
    /// Scores.
    scores: Vec<f64>,
    /// Urgent?
    urgent: bool,
    /// Boxed.
    boxed: Box<i32>,
    /// At most 140 characters.
    note: Note<140>,
    /// Nullable note.
    other: Option<Note<20>>,
}

#[derive(Secrets)]
struct Crm {
    /// The key.
    #[secret(label = "CRM key", description = "The CRM's key.")]
    crm_key: Secret,
}

/// Log the contact in the CRM.
#[define_action(
    summary = { "en-US": "Logs the contact.", "it-IT": "Registra il contatto." },
    category = "crm",
    example = r#"{ "outcome": "interested", "follow": "Nothing", "window": null, "scores": [], "urgent": false, "boxed": 1, "note": "ok", "other": null }"#,
)]
async fn log_contact(
    args: Args,
    who: Subscriber,
    crm: Crm,
    audit: &Audit,
) -> Result<String, ToolError> {
    audit.record("logged", who.id());
    let _ = (crm.crm_key.expose(), args.note.as_str());
    Ok(who.id().to_owned())
}

/// An action that keys what it does by where it runs.
#[define_action]
async fn log_where(
    instance: Instance,
    agent: AgentName,
    channel: TurnChannel,
    maybe: Option<TurnChannel>,
) -> String {
    let _ = maybe;
    format!("{}/{}/{}", instance.slug(), agent.name(), channel.name())
}

/// An action with no arguments.
#[define_action(name = "ping_crm")]
async fn ping(audit: &Audit) {
    audit.record("ping", "");
}

/// Messages from another service.
#[plugin_sdk::define_channel]
struct SlackEvents;

impl Channel for SlackEvents {
    fn inbound(&self, request: &ChannelRequest) -> Result<Inbound, ChannelResponse> {
        let _ = request.header("x-signature");
        Err(ChannelResponse::text(400, "no"))
    }

    fn respond(&self, finished: &FinishedTurn) -> ChannelResponse {
        ChannelResponse::json(200, &finished.reply)
    }
}

fn main() {
    let channel = plugin_sdk::channel::linked_channels().next().unwrap();
    assert_eq!(channel.name, "slack-events");
    assert!(plugin_sdk::engine::linked_tools().all(|tool| tool.is_action()));
}

/// A test target of its own (tests/Cargo.toml): that it compiled is the check, and `main`
/// asserts what it links.
#[test]
fn compiles_and_runs() {
    main();
}
