//! One connection to the engine: the handshake, then calls run as tasks while their
//! questions and answers cross the socket.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Error as WsError;

use super::bridge::{Asker, Pending};
use super::peer::{In, Incoming, Out, Socket};
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
    let socket = match connect(endpoint, options).await {
        Ok(socket) => socket,
        Err(ended) => return ended,
    };
    let (sink, stream) = socket.split();
    let mut out = Out::Socket(sink);
    if let Err(error) = out.send(hello(&served)).await {
        return Ended::NotOpened(error);
    }
    let (welcomed, reason) = frames(out, In::Socket(stream), options, served).await;
    if welcomed {
        Ended::Opened(reason)
    } else {
        Ended::NotOpened(reason)
    }
}

/// The engine's socket at `endpoint`, opened with the options' token; or why not.
pub(super) async fn connect(endpoint: &str, options: &DevOptions) -> Result<Socket, Ended> {
    let mut request = match endpoint.into_client_request() {
        Ok(request) => request,
        Err(error) => {
            return Err(Ended::Refused(format!(
                "`{endpoint}` is not a valid address: {error}"
            )))
        }
    };
    let Ok(bearer) = HeaderValue::from_str(&format!("Bearer {}", options.token)) else {
        return Err(Ended::Refused(
            "the dev token holds characters a header cannot carry".to_owned(),
        ));
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
                return Err(
                    if status == StatusCode::UNAUTHORIZED
                        || status == StatusCode::NOT_FOUND
                        || status == StatusCode::FORBIDDEN
                    {
                        Ended::Refused(why)
                    } else {
                        Ended::NotOpened(why)
                    },
                );
            }
            Err(error) => return Err(Ended::NotOpened(error.to_string())),
        };
    Ok(socket)
}

/// The hello frame of `served`.
pub(super) fn hello(served: &Served) -> String {
    let hello = ToEngine::Hello {
        protocol: PROTOCOL,
        tools: served.declared.clone(),
        hooks: served.hooks.clone(),
    };
    serde_json::to_string(&hello).expect("a frame always serializes")
}

/// Serves `served` over a session whose hello was sent, until it ends: whether the
/// engine welcomed it, and why it ended.
pub(super) async fn frames(
    mut out: Out,
    mut incoming: In,
    options: &DevOptions,
    served: Arc<Served>,
) -> (bool, String) {
    let (sender, mut outgoing) = mpsc::unbounded_channel::<String>();
    let pending: Pending = Arc::default();
    let calls: Arc<Mutex<HashMap<u64, AbortHandle>>> = Arc::default();
    // The highest call number seen: a frame about a higher one names a call never made.
    let mut highest = 0;
    let mut welcomed = false;
    let reason = loop {
        tokio::select! {
            Some(text) = outgoing.recv() => {
                if let Err(error) = out.send(text).await {
                    break error;
                }
            }
            incoming = incoming.next() => {
                let text = match incoming {
                    Incoming::Frame(text) => text,
                    Incoming::Ended(reason) => break reason,
                    Incoming::Unexpected(reason) => {
                        out.close(&reason).await;
                        break reason;
                    }
                };
                let frame = match serde_json::from_str::<ToAuthor>(&text) {
                    Ok(frame) => frame,
                    Err(error) => {
                        let reason = format!("an unknown frame ({error})");
                        out.close(&reason).await;
                        break reason;
                    }
                };
                match frame {
                    ToAuthor::Welcome { protocol, session, agent: _, equipped, hooks, refused } => {
                        if protocol != PROTOCOL {
                            let reason = format!("the engine speaks protocol {protocol}, this process {PROTOCOL}");
                            out.close(&reason).await;
                            break reason;
                        }
                        welcomed = true;
                        options.report(DevEvent::Connected { session, equipped, hooks, refused });
                    }
                    ToAuthor::Call(frame) => {
                        let call = frame.call;
                        highest = highest.max(call);
                        options.report(DevEvent::Called { tool: frame.tool.clone(), call });
                        let asker = Asker::new(call, sender.clone(), Arc::clone(&pending));
                        let served = Arc::clone(&served);
                        let sender = sender.clone();
                        let options = options.clone();
                        let running = Arc::clone(&calls);
                        let task = tokio::spawn(async move {
                            let outcome = if frame.event.is_some() {
                                served.call_hook(*frame, asker).await
                            } else {
                                served.call(*frame, asker).await
                            };
                            options.report(DevEvent::Finished { call, ok: matches!(outcome, Outcome::Ok { .. }) });
                            let _ = sender.send(done(call, outcome));
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
                            None if call <= highest => {}
                            None => {
                                let reason = format!("an answer to question {ask} of call {call}, which was never made");
                                out.close(&reason).await;
                                break reason;
                            }
                        }
                    }
                }
            }
        }
    };
    for (_, task) in calls.lock().expect("never poisoned").drain() {
        task.abort();
    }
    (welcomed, reason)
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
