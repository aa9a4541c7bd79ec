//! Every event, with every return form it admits, sync and async, with and without the
//! payload, and every attribute.
// A compile check: the arguments' fields shape the schemas, and nothing reads them; a
// hook may take every extractor there is.
#![allow(dead_code, clippy::too_many_arguments)]

use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "forms", engine = ">=0.1" }

/// Starts a conversation with context; takes no payload.
#[define_hook(event = "conversation_start", position = 0, timeout_ms = 60000)]
fn start() -> PreModelOutcome {
    PreModelOutcome::InjectContext("first turn".into())
}

/// Observes the start of a conversation, or fails.
#[define_hook(event = "conversation_start")]
async fn start_or_fail(event: &ConversationStart) -> Result<(), std::io::Error> {
    let _ = event.turn().conversation();
    Ok(())
}

/// Halts on a command.
#[define_hook(
    event = "message_received",
    name = "command",
    summary = { "en-US": "Answers commands.", "it-IT": "Risponde ai comandi." },
    position = 4294967295,
    timeout_ms = 1,
)]
async fn halt_on_command(event: &MessageReceived) -> Result<PreModelOutcome, String> {
    std::future::ready(()).await;
    Ok(match event.message() {
        "/ping" => PreModelOutcome::Halt {
            message: "pong".into(),
            persist: false,
        },
        _ => PreModelOutcome::Observe,
    })
}

/// Regenerates or replaces.
#[define_hook(
    event = "response_generated",
    mutates_response,
    summary = "Guards replies."
)]
fn guard(event: &ResponseGenerated) -> ResponseOutcome {
    if event.regeneration_count() == 0 {
        ResponseOutcome::Regenerate { reason: None }
    } else {
        ResponseOutcome::ReplaceResponse {
            message: event.response().to_uppercase(),
        }
    }
}

/// Observes replies without mutating them; `mutates_response = false` says so.
#[define_hook(event = "response_generated", mutates_response = false)]
fn watch(event: &ResponseGenerated) {
    let _ = event.message();
}

/// Observes what was sent.
#[define_hook(event = "response_sent")]
async fn sent(event: &ResponseSent) {
    let _ = event.response();
}

/// Reads the stored history and where it runs once the reply is sent.
#[define_hook(event = "response_sent")]
async fn look_back(
    history: History,
    instance: Instance,
    agent: AgentName,
    channel: Option<TurnChannel>,
) {
    let _ = history.recent(RecentMessages::default()).await;
    let _ = (
        instance.slug(),
        agent.name(),
        channel.map(|c| c.name().to_owned()),
    );
}

/// Reads the channel a message came through, which it needs.
#[define_hook(event = "message_received")]
fn from_channel(_event: &MessageReceived, channel: TurnChannel) {
    let _ = channel.conversation();
}

/// A guard that fails closed: its error halts the turn.
#[define_hook(event = "message_received", fail_closed = "The guard is unavailable.")]
fn guard_message(event: &MessageReceived) -> Result<(), String> {
    let _ = event.message();
    Ok(())
}

/// A reply guard that fails closed, in two languages: its failure replaces the reply.
#[define_hook(
    event = "response_generated",
    mutates_response,
    fail_closed = { "en-US": "The reply could not be checked.", "it-IT": "La risposta non è stata verificata." },
)]
fn guard_reply(event: &ResponseGenerated) -> Result<(), String> {
    let _ = event.response();
    Ok(())
}

fn main() {}

/// The key of the moderation service.
#[derive(Secrets)]
pub struct ModerationKey {
    /// The key.
    #[secret(
        label = "Moderation key",
        description = "The moderation service's key."
    )]
    pub moderation_key: Secret,
}

/// Every extractor a hook before the model may take.
#[define_hook(event = "message_received")]
async fn with_every_extractor(
    event: &MessageReceived,
    subscriber: Subscriber,
    conversation: Conversation,
    state: &State,
    key: ModerationKey,
    model: Option<Model>,
    audit: &Audit,
    abort: &Abort,
) -> PreModelOutcome {
    let _ = (
        event,
        subscriber,
        conversation,
        state,
        key,
        model,
        audit,
        abort,
    );
    std::future::ready(()).await;
    PreModelOutcome::Observe
}

/// What a hook after the reply may take: everything but the state.
#[define_hook(event = "response_sent")]
fn after_sending(event: &ResponseSent, conversation: Conversation, audit: &Audit, abort: &Abort) {
    let _ = (event, conversation, audit, abort);
}

/// The seed's own name, kebab-case: every surface accepts `-` in a name.
#[define_hook(event = "response_generated", name = "dirty-output-guard")]
fn dirty_output_guard(event: &ResponseGenerated) {
    let _ = event;
}

/// A test target of its own (tests/Cargo.toml): that it compiled is the check, and `main`
/// asserts what it links.
#[test]
fn compiles_and_runs() {
    main();
}
