//! One connection to the engine: the handshake, then calls run as tasks while their
//! questions and answers cross the socket.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::bridge::{Asker, Pending};
use super::tools::Served;
use super::{DevEvent, DevOptions};
use crate::wire::{Outcome, ToAuthor, ToEngine, MAX_FRAME_BYTES, PROTOCOL};

/// How a connection ended.
pub(super) enum Ended {
    /// The engine refused the session at the upgrade: do not retry.
    Refused(String),
    /// No session opened (the engine is down, the handshake failed), and why.
    NotOpened(String),
    /// A session opened, then ended, and why.
    Opened(String),
}

/// Connects to `endpoint` and serves `served` until the connection ends.
pub(super) async fn run(endpoint: &str, options: &DevOptions, served: Arc<Served>) -> Ended {
    let mut request = match endpoint.into_client_request() {
        Ok(request) => request,
        Err(error) => {
            return Ended::Refused(format!("`{endpoint}` is not a valid address: {error}"))
        }
    };
    let Ok(bearer) = HeaderValue::from_str(&format!("Bearer {}", options.token)) else {
        return Ended::Refused("the dev token holds characters a header cannot carry".to_owned());
    };
    request.headers_mut().insert("authorization", bearer);
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_FRAME_BYTES))
        .max_frame_size(Some(MAX_FRAME_BYTES));
    let socket =
        match tokio_tungstenite::connect_async_with_config(request, Some(config), false).await {
            Ok((socket, _)) => socket,
            Err(WsError::Http(response)) => {
                let status = response.status();
                let body = response
                    .body()
                    .as_deref()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default()
                    .into_owned();
                let why = format!("{status}: {}", body.trim());
                return if status == StatusCode::UNAUTHORIZED
                    || status == StatusCode::NOT_FOUND
                    || status == StatusCode::FORBIDDEN
                {
                    Ended::Refused(why)
                } else {
                    Ended::NotOpened(why)
                };
            }
            Err(error) => return Ended::NotOpened(error.to_string()),
        };
    let (mut sink, mut stream) = socket.split();
    let hello = ToEngine::Hello {
        protocol: PROTOCOL,
        tools: served.declared.clone(),
        hooks: served.hooks.clone(),
    };
    let hello = serde_json::to_string(&hello).expect("a frame always serializes");
    if let Err(error) = sink.send(Message::text(hello)).await {
        return Ended::NotOpened(error.to_string());
    }
    let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
    let pending: Pending = Arc::default();
    let calls: Arc<Mutex<HashMap<u64, AbortHandle>>> = Arc::default();
    let mut welcomed = false;
    let reason = loop {
        tokio::select! {
            Some(text) = outgoing.recv() => {
                if let Err(error) = sink.send(Message::text(text)).await {
                    break error.to_string();
                }
            }
            message = stream.next() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(frame))) => {
                        break frame.map_or_else(
                            || "the engine closed the session".to_owned(),
                            |frame| format!("the engine closed the session: {}", frame.reason),
                        );
                    }
                    Some(Ok(Message::Binary(_))) => {
                        break close(&mut sink, "a binary frame: the protocol sends text").await;
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(error)) => break error.to_string(),
                    None => break "the connection closed".to_owned(),
                };
                let frame = match serde_json::from_str::<ToAuthor>(&text) {
                    Ok(frame) => frame,
                    Err(error) => break close(&mut sink, &format!("an unknown frame ({error})")).await,
                };
                match frame {
                    ToAuthor::Welcome { protocol, session, agent: _, equipped, hooks, refused } => {
                        if protocol != PROTOCOL {
                            break close(&mut sink, &format!("the engine speaks protocol {protocol}, this process {PROTOCOL}")).await;
                        }
                        welcomed = true;
                        options.report(DevEvent::Connected { session, equipped, hooks, refused });
                    }
                    ToAuthor::Call(frame) => {
                        let call = frame.call;
                        options.report(DevEvent::Called { tool: frame.tool.clone(), call });
                        let asker = Asker::new(call, out.clone(), Arc::clone(&pending));
                        let served = Arc::clone(&served);
                        let out = out.clone();
                        let options = options.clone();
                        let running = Arc::clone(&calls);
                        let task = tokio::spawn(async move {
                            let outcome = if frame.event.is_some() {
                                served.call_hook(*frame, asker).await
                            } else {
                                served.call(*frame, asker).await
                            };
                            options.report(DevEvent::Finished { call, ok: matches!(outcome, Outcome::Ok { .. }) });
                            let _ = out.send(done(call, outcome));
                            running.lock().expect("never poisoned").remove(&call);
                        });
                        calls.lock().expect("never poisoned").insert(call, task.abort_handle());
                    }
                    ToAuthor::Cancel { call } => {
                        // Dropping the call's future fires its abort signal.
                        if let Some(task) = calls.lock().expect("never poisoned").remove(&call) {
                            task.abort();
                            options.report(DevEvent::Cancelled { call });
                        }
                    }
                    ToAuthor::Answer { call, ask, answer } => {
                        let waiting = pending.lock().expect("never poisoned").remove(&(call, ask));
                        match waiting {
                            Some(waiting) => { let _ = waiting.send(answer); }
                            // A question dropped at its call's end may still be answered.
                            None if !calls.lock().expect("never poisoned").contains_key(&call) => {}
                            None => break close(&mut sink, &format!("an answer to question {ask} of call {call}, which was not asked")).await,
                        }
                    }
                }
            }
        }
    };
    for (_, task) in calls.lock().expect("never poisoned").drain() {
        task.abort();
    }
    if welcomed {
        Ended::Opened(reason)
    } else {
        Ended::NotOpened(reason)
    }
}

/// The frame that ends `call` with `outcome`: an output too large for a frame ends it
/// with an error instead.
fn done(call: u64, outcome: Outcome) -> String {
    let text = serde_json::to_string(&ToEngine::Done { call, outcome })
        .expect("a frame always serializes");
    if text.len() <= MAX_FRAME_BYTES {
        return text;
    }
    let outcome = Outcome::Err {
        kind: "output".to_owned(),
        message: format!(
            "the output is {} bytes as a frame, and a development session carries at most {MAX_FRAME_BYTES}",
            text.len()
        ),
    };
    serde_json::to_string(&ToEngine::Done { call, outcome }).expect("a frame always serializes")
}

/// Closes the session with `reason` (logged here, and sent for the engine's log).
async fn close<S>(sink: &mut S, reason: &str) -> String
where
    S: futures::Sink<Message> + Unpin,
{
    tracing::warn!(reason, "closing the development session");
    let frame = CloseFrame {
        code: CloseCode::Protocol,
        reason: reason.chars().take(120).collect::<String>().into(),
    };
    let _ = sink.send(Message::Close(Some(frame))).await;
    reason.to_owned()
}
