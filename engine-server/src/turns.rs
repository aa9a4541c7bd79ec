//! The agent turn over HTTP: `POST /v1/agents/{agent}/turns` answers the turn's events as
//! NDJSON while it runs (`?wire=rojo`: in seed 002's four lines instead, [`crate::rojo`]);
//! `GET /v1/conversations/{id}` returns a conversation's history and its staged actions.
//! Behind the same guards as `/mcp` (the bearer token, the in-flight bound, the body
//! deadline, and `Host` and `Origin` checked as rmcp checks them for `/mcp`).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use engine_core::{
    Attachment, AttachmentError, CancellationToken, Engine, Stop, TurnControl, TurnEvent,
};
use serde::Deserialize;
use serde_json::json;

use super::ids::{random_hex, valid_id, CHANNEL_MARK};
use super::problem::problem;
use super::rojo::RojoWire;

/// The body of `POST /v1/agents/{agent}/turns`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnRequest {
    /// The user's message; absent: resume the conversation's unfinished step.
    #[serde(default)]
    message: Option<String>,
    /// The conversation to continue; absent: a new one (its id is in the
    /// `x-conversation-id` header of the answer).
    #[serde(default)]
    conversation: Option<String>,
    /// The end user; default `anonymous`.
    #[serde(default)]
    subscriber: Option<String>,
    /// The reader's locale (BCP 47).
    #[serde(default)]
    locale: Option<String>,
    /// Files sent with the message.
    #[serde(default)]
    attachments: Vec<AttachmentBody>,
}

/// A file of [`TurnRequest::attachments`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachmentBody {
    /// Its name (`invoice.pdf`).
    filename: String,
    /// Its media type (`application/pdf`).
    media_type: String,
    /// Its bytes, in base64 (standard, padded).
    data: String,
}

impl AttachmentBody {
    /// The file, or why its `data` is not base64.
    fn decoded(self) -> Result<Attachment, String> {
        match base64::engine::general_purpose::STANDARD.decode(&self.data) {
            Ok(bytes) => Ok(Attachment {
                filename: self.filename,
                media_type: self.media_type,
                bytes,
            }),
            Err(_) => Err(format!(
                "the `data` of the attachment {:?} is not base64 (standard, padded)",
                self.filename
            )),
        }
    }
}

/// The query of `POST /v1/agents/{agent}/turns`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnQuery {
    /// The wire the events are written in: `events` (the default) or `rojo`.
    #[serde(default)]
    wire: Wire,
}

/// The wires a turn's events can be written in.
#[derive(Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Wire {
    /// The engine's events, each with its `seq` (`TurnEvent::ndjson_line`).
    #[default]
    Events,
    /// Seed 002's `CHAT`, `TOOL_CALL`, `TOOL_RESULT` and `DONE`.
    Rojo,
}

/// The routes, over `engine`; turns under way are cancelled when `shutdown` is.
pub(super) fn router(engine: Arc<Engine>, shutdown: CancellationToken) -> Router {
    Router::new()
        .route("/v1/agents/{agent}/turns", post(turn))
        .route("/v1/conversations/{id}", get(conversation))
        .with_state(Served { engine, shutdown })
}

#[derive(Clone)]
struct Served {
    engine: Arc<Engine>,
    shutdown: CancellationToken,
}

async fn turn(
    State(Served { engine, shutdown }): State<Served>,
    Path(agent): Path<String>,
    query: Result<Query<TurnQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Json<TurnRequest>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let wire = match query {
        Ok(Query(query)) => query.wire,
        Err(_) => {
            return problem(
                StatusCode::BAD_REQUEST,
                "the query takes only `wire`: `events` (the default) or `rojo` (seed 002's CHAT, TOOL_CALL, TOOL_RESULT and DONE lines)",
            )
        }
    };
    let Json(request) = match body {
        Ok(body) => body,
        Err(rejection) => return problem(StatusCode::BAD_REQUEST, &rejection.body_text()),
    };
    let turn = match engine.turn(&agent) {
        Ok(turn) => turn,
        Err(unknown) => return problem(StatusCode::NOT_FOUND, &unknown.to_string()),
    };
    if turn.agent_config().turn.is_none() {
        let message =
            format!("the agent `{agent}` does not run turns (it has no `turn` configuration)");
        return problem(StatusCode::NOT_FOUND, &message);
    }
    match &request.message {
        None if request.conversation.is_none() => {
            return problem(
                StatusCode::BAD_REQUEST,
                "give a `message`, or a `conversation` to resume",
            )
        }
        Some(message) if message.trim().is_empty() => {
            return problem(StatusCode::BAD_REQUEST, "the `message` is blank")
        }
        None if !request.attachments.is_empty() => {
            return attachment_refused(&AttachmentError::WithoutMessage)
        }
        _ => {}
    }
    for id in [&request.conversation, &request.subscriber]
        .into_iter()
        .flatten()
    {
        if !valid_id(id) {
            return problem(
                StatusCode::BAD_REQUEST,
                "a `conversation` or `subscriber` is 1 to 128 of letters, digits and `-_.:@` (`:` in a subscriber only)",
            );
        }
    }
    if request
        .conversation
        .as_ref()
        .is_some_and(|id| id.contains(CHANNEL_MARK))
    {
        let message = format!(
            "a `conversation` of this route holds no `{}`: that marks a channel's conversations (`<channel>{}<id>`), which only their channel continues",
            CHANNEL_MARK,
            CHANNEL_MARK,
        );
        return problem(StatusCode::BAD_REQUEST, &message);
    }
    let attachments = match request
        .attachments
        .into_iter()
        .map(AttachmentBody::decoded)
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(attachments) => attachments,
        Err(message) => return problem(StatusCode::BAD_REQUEST, &message),
    };
    let conversation = request.conversation.unwrap_or_else(new_conversation_id);
    let subscriber = request
        .subscriber
        .unwrap_or_else(|| engine_core::ANONYMOUS_SUBSCRIBER.to_owned());
    let turn = turn
        .in_conversation(subscriber, conversation.clone())
        .via(engine_core::API_CHANNEL, &conversation);
    let mut turn = match engine.attach(turn, attachments) {
        Ok(turn) => turn,
        Err(refused) => return attachment_refused(&refused),
    };
    if let Some(locale) = request.locale {
        turn = turn.with_locale(locale);
    }
    let (lines, mut received) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    // Cancelled when the server shuts down, or when the client goes (below).
    let control = TurnControl {
        cancel: shutdown.child_token(),
        ..TurnControl::default()
    };
    // The turn stops when its client goes: the body, dropped with the connection, drops
    // this guard. The turn still answers its open calls and stores what it did.
    let gone = control.cancel.clone().drop_guard();
    // The answer's status waits for the turn to begin, or for its first event if it
    // never does: a turn refused because another of its conversation is under way is a
    // 409, not a stream.
    let begun = control.begun.clone();
    let (first, mut busy) = tokio::sync::oneshot::channel::<Option<String>>();
    tokio::spawn(async move {
        let mut seq = 0;
        let mut rojo = RojoWire::default();
        let mut first = Some(first);
        let mut send = |event: TurnEvent| {
            if let Some(first) = first.take() {
                let busy = match &event {
                    TurnEvent::Done {
                        stop: Stop::Busy { message },
                        ..
                    } => Some(message.clone()),
                    _ => None,
                };
                let refused = busy.is_some();
                let _ = first.send(busy);
                if refused {
                    return;
                }
            }
            let line = match wire {
                Wire::Events => {
                    seq += 1;
                    event.ndjson_line(seq)
                }
                Wire::Rojo => match rojo.line(&event) {
                    Some(line) => line,
                    None => return,
                },
            };
            let _ = lines.send(Bytes::from(line));
        };
        engine
            .converse(&turn, request.message.as_deref(), &control, &mut send)
            .await;
    });
    let refused = tokio::select! {
        biased;
        () = begun.cancelled() => None,
        first = &mut busy => first.ok().flatten(),
    };
    if let Some(message) = refused {
        return problem(StatusCode::CONFLICT, &message);
    }
    let body = futures::stream::poll_fn(move |context| {
        let _held = &gone;
        received
            .poll_recv(context)
            .map(|line| line.map(Ok::<_, Infallible>))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .header(header::CACHE_CONTROL, "no-store")
        .header("x-conversation-id", conversation)
        .body(Body::from_stream(body))
        .expect("a valid response")
}

async fn conversation(
    State(Served { engine, .. }): State<Served>,
    Path(id): Path<String>,
) -> Response {
    let found = match engine.conversation(&id).await {
        Ok(messages) => engine
            .conversation_actions(&id)
            .await
            .map(|actions| (messages, actions)),
        Err(error) => Err(error),
    };
    match found {
        Ok((messages, _)) if messages.is_empty() => {
            problem(StatusCode::NOT_FOUND, &format!("no conversation `{id}`"))
        }
        Ok((messages, actions)) => {
            Json(json!({ "conversation": id, "messages": messages, "actions": actions }))
                .into_response()
        }
        Err(error) => problem(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
    }
}

/// The answer to a request whose files are refused: nothing of it was kept.
pub(super) fn attachment_refused(refused: &AttachmentError) -> Response {
    let status = StatusCode::from_u16(refused.status()).unwrap_or(StatusCode::BAD_REQUEST);
    problem(status, &refused.to_string())
}

/// A new conversation's id: 128 random bits, as hex.
fn new_conversation_id() -> String {
    random_hex(16)
}
