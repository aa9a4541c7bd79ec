//! Dev sessions at `GET /v1/dev/agents/{agent}`: a plugin author's process serving its
//! tools to one agent over a WebSocket (the `plugin-dev` crate is its side).
//!
//! The upgrade needs the agent's dev token as `Authorization: Bearer …` (401 without
//! one that is right, unrevoked and unexpired; the engine's own token is not asked, so
//! that an author never holds it), and passes the same Host and Origin checks as every
//! route. The session then speaks `plugin_dev_wire`: a hello with the tools, a welcome
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
use plugin_dev_wire::{ToAuthor, ToEngine, MAX_FRAME_BYTES, PROTOCOL};
use tokio::sync::{mpsc, Semaphore};
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
    /// Places for the sockets open at once (greeted or not): an upgraded connection
    /// leaves the server's own bound on connections.
    open: Arc<Semaphore>,
}

/// The most dev sessions' sockets open at once, every agent together.
const MAX_OPEN_SOCKETS: usize = 32;

/// How long a frame may take to be written before the session counts as stuck.
const WRITE_WITHIN: Duration = Duration::from_secs(10);

/// How often a session may replace what it serves.
const UPDATE_EVERY: Duration = Duration::from_secs(1);

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
            open: Arc::new(Semaphore::new(MAX_OPEN_SOCKETS)),
        })
}

async fn upgrade(
    State(dev): State<Dev>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let Some(tokens) = dev.tokens.clone() else {
        return (
            StatusCode::NOT_FOUND,
            "dev mode is off: this server was given no dev tokens (`HttpOptions::dev_tokens`)",
        )
            .into_response();
    };
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    // The file is read from disk at each check: off the server's threads.
    let checked = {
        let (tokens, agent, token) = (tokens.clone(), agent.clone(), token.clone());
        tokio::task::spawn_blocking(move || tokens.check(&agent, &token)).await
    };
    let token_id = match checked {
        Ok(Ok(id)) => id,
        Ok(Err(refusal)) => {
            tracing::warn!(agent, why = refusal.as_str(), "a dev session was refused");
            return (
                StatusCode::UNAUTHORIZED,
                "the dev token is wrong, revoked or expired for this agent: issue one with `engine dev-token issue --agent <agent>`",
            )
                .into_response();
        }
        Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    if dev.engine.agent(&agent).is_none() {
        return (
            StatusCode::NOT_FOUND,
            format!("there is no agent `{agent}`"),
        )
            .into_response();
    }
    let Ok(place) = Arc::clone(&dev.open).try_acquire_owned() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "as many development sessions are open as the engine takes: close one",
        )
            .into_response();
    };
    upgrade
        .max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| async move {
            let still_valid = move |agent: String| {
                let (tokens, token) = (tokens.clone(), token.clone());
                async move {
                    tokio::task::spawn_blocking(move || tokens.check(&agent, &token).is_ok())
                        .await
                        .unwrap_or(false)
                }
            };
            run(
                socket,
                dev.engine,
                agent,
                token_id,
                still_valid,
                dev.shutdown,
            )
            .await;
            drop(place);
        })
}

/// One session, from hello to close.
async fn run<F, C>(
    socket: WebSocket,
    engine: Arc<Engine>,
    agent: String,
    token_id: String,
    still_valid: F,
    shutdown: CancellationToken,
) where
    F: Fn(String) -> C,
    C: std::future::Future<Output = bool>,
{
    let (mut sink, mut stream) = socket.split();
    let hello = match tokio::time::timeout(HELLO_WITHIN, stream.next()).await {
        Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<ToEngine>(&text),
        Ok(_) | Err(_) => {
            let why = "a session starts with a hello frame";
            let _ = tokio::time::timeout(WRITE_WITHIN, sink.send(close(1002, why))).await;
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
            let _ = tokio::time::timeout(WRITE_WITHIN, sink.send(close(1002, &reason))).await;
            return;
        }
        Ok(_) | Err(_) => {
            let why = "a session starts with a hello frame";
            let _ = tokio::time::timeout(WRITE_WITHIN, sink.send(close(1002, why))).await;
            return;
        }
    };
    // Frames out go through a short queue to a writer of their own, so that a process
    // that stops reading never holds this loop: the queue fills, and the session ends.
    let (out, mut outgoing) = mpsc::channel::<Message>(link::MAX_QUEUED_FRAMES);
    let wedged = CancellationToken::new();
    let writer = tokio::spawn({
        let wedged = wedged.clone();
        async move {
            while let Some(message) = outgoing.recv().await {
                let closing = matches!(message, Message::Close(_));
                match tokio::time::timeout(WRITE_WITHIN, sink.send(message)).await {
                    Ok(Ok(())) if !closing => {}
                    Ok(Ok(())) => return,
                    _ => {
                        wedged.cancel();
                        return;
                    }
                }
            }
        }
    });
    let link = WsLink::new(out, wedged.clone());
    let mut session = match engine.open_dev_session(&agent, tools, hooks, Arc::new(link.clone())) {
        Ok(session) => session,
        Err(why) => {
            link.queue(close(1008, &why));
            let _ = tokio::time::timeout(WRITE_WITHIN, writer).await;
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
    // An update that comes sooner than `UPDATE_EVERY` after the last waits until then;
    // a later one replaces it.
    let mut last_update: Option<tokio::time::Instant> = None;
    let mut waiting_update = None;
    let closing = |code: u16, reason: &str| {
        link.queue(close(code, reason));
        reason.to_owned()
    };
    let reason = loop {
        tokio::select! {
            message = stream.next() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => break "the developer's process closed the session".to_owned(),
                    Some(Ok(Message::Binary(_))) => {
                        break closing(1003, "a binary frame: the protocol sends text");
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(error)) => {
                        let reason = format!("the connection failed ({error}); a frame may be larger than the {MAX_FRAME_BYTES} bytes a session carries");
                        break closing(1009, &reason);
                    }
                };
                let routed = match serde_json::from_str::<ToEngine>(&text) {
                    Err(error) => Routed::Unknown(format!("an unknown frame ({error})")),
                    Ok(ToEngine::Hello { .. }) => Routed::Unknown("a second hello".to_owned()),
                    Ok(ToEngine::Update { tools, hooks }) => {
                        waiting_update = Some((tools, hooks));
                        Routed::Handled
                    }
                    Ok(ToEngine::Done { call, outcome }) => link.done(call, outcome),
                    Ok(ToEngine::Audit { call, event, detail }) => link.audit(call, &event, &detail),
                    Ok(ToEngine::Ask { call, ask, question }) => link.ask(call, ask, question),
                };
                if let Routed::Unknown(reason) = routed {
                    break closing(1002, &reason);
                }
            }
            () = sleep_until(last_update.map(|last| last + UPDATE_EVERY)), if waiting_update.is_some() => {
                let (tools, hooks) = waiting_update.take().expect("checked by the guard");
                last_update = Some(tokio::time::Instant::now());
                engine.update_dev_session(&mut session, tools, hooks);
                tracing::info!(agent, session = session.id(), equipped = ?session.equipped(), hooks = ?session.hooks(), "a dev session was updated");
                link.send(&welcome(&session));
            }
            () = wedged.cancelled() => {
                break "the developer's process stopped reading its frames".to_owned();
            }
            _ = recheck.tick() => {
                if !still_valid(agent.clone()).await {
                    break closing(1008, "the dev token was revoked or has expired");
                }
            }
            () = shutdown.cancelled() => {
                break closing(1001, "the engine is shutting down");
            }
        }
    };
    // The agent stops offering the session's tools first, then the calls under way
    // answer "disconnected": a turn's next request never lists what is gone.
    let id = session.id().to_owned();
    drop(session);
    link.close();
    // Its writer ends once a close frame is out (one may be queued already): calls that
    // still hold the link do not keep the socket open.
    link.queue(close(1000, &reason));
    drop(link);
    tracing::info!(agent, session = id, reason, "a dev session closed");
    // The close frame, if it can go out; a process that stopped reading gets none.
    let mut writer = writer;
    if tokio::time::timeout(WRITE_WITHIN, &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
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

/// A close frame, its reason cut to what a control frame carries.
fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from(plugin_dev_wire::close_reason(reason).to_owned()),
    }))
}

/// Sleeps until `at`, or not at all without one.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}
