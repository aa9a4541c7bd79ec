//! Turns of one conversation on two engines (replicas) sharing PostgreSQL: the history
//! and the tools' state carry over from one to the other, and a turn sent to one while
//! the other runs one of the same conversation is refused as busy, doing nothing.

use std::sync::Arc;

use engine_core::config::{AgentConfig, DatabaseConfig, EngineConfig, TurnConfig};
use engine_core::conversation::Message;
use engine_core::provider::{Provider, ProviderError, ProviderReply, ProviderRequest, Wire};
use engine_core::{Engine, Stop, TurnControl};
use plugin_sdk::engine::BoxFuture;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::sync::Semaphore;

use crate::support::fresh_database;

/// Answers with the number of messages it was sent, once `gate` lets it; says on
/// `asked` that it was asked.
struct Gated {
    gate: Arc<Semaphore>,
    asked: UnboundedSender<()>,
}

impl Provider for Gated {
    fn wire(&self) -> Wire {
        Wire::Openai
    }

    fn respond<'a>(
        &'a self,
        request: ProviderRequest<'a>,
        _: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        let seen = request.history.len();
        Box::pin(async move {
            let _ = self.asked.send(());
            self.gate.acquire().await.expect("open").forget();
            Ok(ProviderReply {
                text: format!("I saw {seen} messages."),
                ..ProviderReply::default()
            })
        })
    }
}

/// A replica on `database` whose agent `bot` runs its turns with `provider` and offers
/// the linked tools `tools` names.
fn replica_with(database: &DatabaseConfig, provider: Arc<dyn Provider>, tools: &[&str]) -> Engine {
    let mut config = EngineConfig::default();
    config.database = Some(database.clone());
    config.agents.insert(
        "bot".into(),
        AgentConfig {
            turn: Some(TurnConfig::new("test")),
            ..AgentConfig::default()
        },
    );
    let tools: Vec<String> = tools.iter().map(|tool| (*tool).to_owned()).collect();
    Engine::builder()
        .backends(engine::default_backends())
        .config(config)
        .tools(
            plugin_sdk::engine::linked_tools()
                .filter(move |tool| tools.iter().any(|name| name == tool.name)),
        )
        .hooks([])
        .provider("test", provider)
        .build()
        .expect("the replica starts")
}

fn replica(
    database: &DatabaseConfig,
    gate: &Arc<Semaphore>,
    asked: &UnboundedSender<()>,
) -> Engine {
    let gated = Gated {
        gate: Arc::clone(gate),
        asked: asked.clone(),
    };
    replica_with(database, Arc::new(gated), &[])
}

async fn say(engine: &Engine, text: &str) -> Stop {
    let turn = engine.turn("bot").unwrap().in_conversation("ada", "c");
    engine
        .converse(&turn, Some(text), &TurnControl::default(), &mut |_| {})
        .await
        .stop
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_goes_on_across_replicas_one_turn_at_a_time() {
    let database = fresh_database().await;
    let gate = Arc::new(Semaphore::new(0));
    let (asked, mut was_asked) = unbounded_channel();
    let (a, b) = (
        Arc::new(replica(&database, &gate, &asked)),
        Arc::new(replica(&database, &gate, &asked)),
    );
    gate.add_permits(1);
    assert_eq!(say(&a, "one").await, Stop::Answered);
    was_asked.recv().await;

    // a's second turn waits on the model; b is asked meanwhile.
    let running = tokio::spawn({
        let a = Arc::clone(&a);
        async move { say(&a, "two").await }
    });
    was_asked.recv().await;
    let refused = say(&b, "meanwhile").await;
    assert!(
        matches!(&refused, Stop::Busy { message } if message.contains("under way in another process or replica")),
        "{refused:?}"
    );
    gate.add_permits(1);
    assert_eq!(running.await.unwrap(), Stop::Answered);

    // b goes on from the whole history, and added nothing for the refused turn.
    gate.add_permits(1);
    assert_eq!(say(&b, "three").await, Stop::Answered);
    let history = b.conversation("c").await.unwrap();
    let users: Vec<&Message> = history
        .iter()
        .filter(|message| matches!(message, Message::User { .. }))
        .collect();
    assert_eq!(
        users,
        [
            &Message::user("one"),
            &Message::user("two"),
            &Message::user("three")
        ]
    );
    assert!(
        matches!(history.last(), Some(Message::Assistant { content, .. }) if content == "I saw 5 messages."),
        "{history:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_turns_at_once_than_a_replica_has_connections_all_answer() {
    let mut database = fresh_database().await;
    // Two connections for store operations, two for turns' locks: six turns at once
    // hold locks two at a time, while their loads and appends still get connections.
    database.max_connections = 2;
    let gate = Arc::new(Semaphore::new(6));
    let (asked, _was_asked) = unbounded_channel();
    let engine = Arc::new(replica(&database, &gate, &asked));
    let turns = (0..6).map(|n| {
        let engine = Arc::clone(&engine);
        tokio::spawn(async move {
            let turn = engine
                .turn("bot")
                .unwrap()
                .in_conversation("ada", format!("c{n}"));
            engine
                .converse(&turn, Some("hello"), &TurnControl::default(), &mut |_| {})
                .await
                .stop
        })
    });
    for stop in futures::future::join_all(turns).await {
        assert_eq!(stop.unwrap(), Stop::Answered);
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema, plugin_sdk::prelude::ToolArgs)]
struct By {
    /// How much to add.
    by: u64,
}

/// Adds to the conversation's tally, and answers it.
#[plugin_sdk::prelude::define_tool]
async fn tally(
    args: By,
    state: &plugin_sdk::prelude::State,
) -> Result<u64, plugin_sdk::prelude::ToolError> {
    let tally = state.get::<u64>("tally").unwrap_or(0) + args.by;
    state
        .set("tally", &tally)
        .map_err(|error| plugin_sdk::prelude::ToolError::new(error.to_string()))?;
    Ok(tally)
}

/// Calls `probe__tally` once per turn, then answers.
struct Tallying;

impl Provider for Tallying {
    fn wire(&self) -> Wire {
        Wire::Openai
    }

    fn respond<'a>(
        &'a self,
        request: ProviderRequest<'a>,
        _: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        let answered = matches!(request.history.last(), Some(Message::Tool { .. }));
        Box::pin(async move {
            Ok(if answered {
                ProviderReply {
                    text: "Counted.".into(),
                    ..ProviderReply::default()
                }
            } else {
                ProviderReply {
                    tool_calls: vec![engine_core::conversation::ToolCall {
                        id: "call_0".into(),
                        name: "probe__tally".into(),
                        arguments: r#"{"by":1}"#.into(),
                        extra: Default::default(),
                    }],
                    ..ProviderReply::default()
                }
            })
        })
    }
}

fn tallying_replica(database: &DatabaseConfig) -> Engine {
    replica_with(database, Arc::new(Tallying), &["tally"])
}

/// The tally the turn's tool answered.
async fn count_on(engine: &Engine) -> String {
    let turn = engine.turn("bot").unwrap().in_conversation("ada", "c");
    let mut results = Vec::new();
    let summary = engine
        .converse(
            &turn,
            Some("count"),
            &TurnControl::default(),
            &mut |event| {
                if let engine_core::TurnEvent::ToolResult { result, .. } = event {
                    results.push(result);
                }
            },
        )
        .await;
    assert_eq!(summary.stop, Stop::Answered, "{summary:?}");
    assert_eq!(results.len(), 1, "{results:?}");
    results[0]
        .as_ref()
        .map(|result| result.get().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_turn_starts_from_the_state_the_last_left_on_any_replica_not_from_its_own_memory() {
    let database = fresh_database().await;
    let (a, b) = (tallying_replica(&database), tallying_replica(&database));
    assert_eq!(count_on(&a).await, "1");
    assert_eq!(count_on(&b).await, "2", "b starts from a's state");
    // a still holds its own tally of 1 from its first turn: the stored 2 wins.
    assert_eq!(count_on(&a).await, "3", "a starts from b's state");
    assert_eq!(count_on(&b).await, "4");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_while_the_database_is_gone_fails_saying_so_and_the_next_once_it_is_back_answers() {
    let relay = crate::support::Relay::start().await;
    let database = DatabaseConfig {
        timeout_ms: 1000,
        ..relay.through(&fresh_database().await)
    };
    let gate = Arc::new(Semaphore::new(3));
    let (asked, _was_asked) = unbounded_channel();
    let engine = replica(&database, &gate, &asked);
    assert_eq!(say(&engine, "one").await, Stop::Answered);

    relay.down();
    let gone = say(&engine, "two").await;
    assert!(
        matches!(&gone, Stop::Failed { message } if message.contains("the database is unavailable")),
        "{gone:?}"
    );

    relay.up().await;
    assert_eq!(say(&engine, "three").await, Stop::Answered);
    let users: Vec<Message> = engine
        .conversation("c")
        .await
        .unwrap()
        .into_iter()
        .filter(|message| matches!(message, Message::User { .. }))
        .collect();
    assert_eq!(users, [Message::user("one"), Message::user("three")]);
}
