//! Dev sessions at `GET /v1/dev/agents/{agent}`: a plugin author's process serving its
//! tools to one agent over a WebSocket (the `plugin-dev` crate is its side).
//!
//! The upgrade needs the agent's dev token as `Authorization: Bearer …` (401 without
//! one that is right, unrevoked and unexpired; the engine's own token is not asked, so
//! that an author never holds it), and passes the same Host and Origin checks as every
//! route. The session then speaks `plugin_dev::wire`: a hello with the tools, a welcome
//! with what the agent equips, calls, questions and ends. A frame that does not parse, is
//! larger than 1 MiB, speaks another protocol version or names a call never made closes
//! the session with a reason, logged on both sides.

mod link;
pub mod tokens;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use engine_core::Engine;
use futures::{SinkExt, StreamExt};
use plugin_dev::wire::{ToAuthor, ToEngine, MAX_FRAME_BYTES, PROTOCOL};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use link::{Routed, WsLink};
use tokens::DevTokens;

/// How long a new session has to say hello.
const HELLO_WITHIN: Duration = Duration::from_secs(10);
/// How often an open session's token is checked again (revoked, expired).
const RECHECK_EVERY: Duration = Duration::from_secs(5);

#[derive(Clone)]
struct Dev {
    engine: Arc<Engine>,
    tokens: Option<DevTokens>,
    shutdown: CancellationToken,
}

/// The dev sessions' route, over `engine`, with the tokens of `tokens` (none: dev mode
/// is off, and the route answers 404 saying how to turn it on).
pub(super) fn router(
    engine: Arc<Engine>,
    tokens: Option<DevTokens>,
    shutdown: CancellationToken,
) -> Router {
    Router::new()
        .route("/v1/dev/agents/{agent}", get(upgrade))
        .with_state(Dev {
            engine,
            tokens,
            shutdown,
        })
}

async fn upgrade(
    State(dev): State<Dev>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let Some(tokens) = &dev.tokens else {
        return (
            StatusCode::NOT_FOUND,
            "dev mode is off: give the engine a `data_dir` and issue a token with `engine dev-token issue --agent <agent>`",
        )
            .into_response();
    };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    let token_id = match tokens.check(&agent, token) {
        Ok(id) => id,
        Err(refusal) => {
            tracing::warn!(agent, why = refusal.as_str(), "a dev session was refused");
            return (
                StatusCode::UNAUTHORIZED,
                "the dev token is wrong, revoked or expired for this agent: issue one with `engine dev-token issue --agent <agent>`",
            )
                .into_response();
        }
    };
    if dev.engine.agent(&agent).is_none() {
        return (
            StatusCode::NOT_FOUND,
            format!("there is no agent `{agent}`"),
        )
            .into_response();
    }
    let token = token.to_owned();
    upgrade
        .max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| async move {
            let tokens = dev.tokens.clone().expect("checked above");
            let recheck = move |agent: &str| tokens.check(agent, &token).is_ok();
            run(socket, dev.engine, agent, token_id, recheck, dev.shutdown).await;
        })
}

/// One session, from hello to close.
async fn run(
    socket: WebSocket,
    engine: Arc<Engine>,
    agent: String,
    token_id: String,
    still_valid: impl Fn(&str) -> bool,
    shutdown: CancellationToken,
) {
    let (mut sink, mut stream) = socket.split();
    let hello = match tokio::time::timeout(HELLO_WITHIN, stream.next()).await {
        Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<ToEngine>(&text),
        Ok(_) | Err(_) => {
            let _ = sink
                .send(close(1002, "a session starts with a hello frame"))
                .await;
            return;
        }
    };
    let (tools, hooks) = match hello {
        Ok(ToEngine::Hello {
            protocol,
            tools,
            hooks,
        }) if protocol == PROTOCOL => (tools, hooks),
        Ok(ToEngine::Hello { protocol, .. }) => {
            let reason = format!("this engine speaks protocol {PROTOCOL}, the session {protocol}");
            tracing::warn!(agent, reason, "a dev session was closed");
            let _ = sink.send(close(1002, &reason)).await;
            return;
        }
        Ok(_) | Err(_) => {
            let _ = sink
                .send(close(1002, "a session starts with a hello frame"))
                .await;
            return;
        }
    };
    let (out, mut outgoing) = mpsc::unbounded_channel();
    let link = WsLink::new(out);
    let mut session = match engine.open_dev_session(&agent, tools, hooks, Arc::new(link.clone())) {
        Ok(session) => session,
        Err(why) => {
            let _ = sink.send(close(1008, &why)).await;
            return;
        }
    };
    tracing::info!(
        agent,
        session = session.id(),
        token = token_id,
        equipped = ?session.equipped(),
        hooks = ?session.hooks(),
        "a dev session opened"
    );
    link.send(&welcome(&session));
    let mut recheck = tokio::time::interval(RECHECK_EVERY);
    recheck.tick().await;
    let reason = loop {
        tokio::select! {
            Some(message) = outgoing.recv() => {
                if sink.send(message).await.is_err() {
                    break "the connection closed".to_owned();
                }
            }
            message = stream.next() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => break "the developer's process closed the session".to_owned(),
                    Some(Ok(Message::Binary(_))) => {
                        break closing(&mut sink, 1003, "a binary frame: the protocol sends text").await;
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(error)) => {
                        let reason = format!("the connection failed ({error}); a frame may be larger than the {MAX_FRAME_BYTES} bytes a session carries");
                        break closing(&mut sink, 1009, &reason).await;
                    }
                };
                let routed = match serde_json::from_str::<ToEngine>(&text) {
                    Err(error) => Routed::Unknown(format!("an unknown frame ({error})")),
                    Ok(ToEngine::Hello { .. }) => Routed::Unknown("a second hello".to_owned()),
                    Ok(ToEngine::Update { tools, hooks }) => {
                        engine.update_dev_session(&mut session, tools, hooks);
                        tracing::info!(agent, session = session.id(), equipped = ?session.equipped(), "a dev session was updated");
                        link.send(&welcome(&session));
                        Routed::Handled
                    }
                    Ok(ToEngine::Done { call, outcome }) => link.done(call, outcome),
                    Ok(ToEngine::Audit { call, event, detail }) => link.audit(call, &event, &detail),
                    Ok(ToEngine::Ask { call, ask, question }) => link.ask(call, ask, question),
                };
                if let Routed::Unknown(reason) = routed {
                    break closing(&mut sink, 1002, &reason).await;
                }
            }
            _ = recheck.tick() => {
                if !still_valid(&agent) {
                    break closing(&mut sink, 1008, "the dev token was revoked or has expired").await;
                }
            }
            () = shutdown.cancelled() => {
                break closing(&mut sink, 1001, "the engine is shutting down").await;
            }
        }
    };
    // Calls under way answer "disconnected"; the agent stops offering the tools.
    link.close();
    tracing::info!(
        agent,
        session = session.id(),
        reason,
        "a dev session closed"
    );
    drop(session);
}

fn welcome(session: &engine_core::DevSession) -> ToAuthor {
    ToAuthor::Welcome {
        protocol: PROTOCOL,
        session: session.id().to_owned(),
        agent: session.agent().to_owned(),
        equipped: session.equipped(),
        hooks: session.hooks(),
        refused: session.refused().to_vec(),
    }
}

/// Sends a close frame with `reason`, and gives the reason for the log.
async fn closing<S>(sink: &mut S, code: u16, reason: &str) -> String
where
    S: futures::Sink<Message> + Unpin,
{
    let _ = sink.send(close(code, reason)).await;
    reason.to_owned()
}

/// A close frame: its reason cut to what a control frame carries (123 bytes).
fn close(code: u16, reason: &str) -> Message {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Message::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from(reason[..end].to_owned()),
    }))
}
