//! The engine's end of one session's socket, as the kernel calls through it: each call
//! a frame out and a slot waiting for its end, the questions it asks answered from its
//! context.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::ws::{Message, Utf8Bytes};
use engine_core::dev::{DevLink, DevServe, Disconnected};
use plugin_dev::wire::{Answer, CallFrame, Outcome, Question, ToAuthor, MAX_FRAME_BYTES};
use plugin_sdk::engine::BoxFuture;
use tokio::sync::{mpsc, oneshot, Semaphore};

/// The most questions one session has waiting for an answer at once.
const MAX_QUESTIONS: usize = 64;

/// The link of one session: cheap to clone, shared by the kernel's calls and the
/// session's loop.
#[derive(Clone)]
pub(super) struct WsLink(Arc<Inner>);

struct Inner {
    out: mpsc::UnboundedSender<Message>,
    next: AtomicU64,
    calls: Mutex<HashMap<u64, Slot>>,
    questions: Arc<Semaphore>,
}

/// A call under way: where its end goes, and what answers its questions.
struct Slot {
    done: oneshot::Sender<Outcome>,
    serve: Arc<DevServe>,
}

/// What the session's loop does with a frame about a call.
pub(super) enum Routed {
    /// Handled.
    Handled,
    /// About a call never made: the session is closed with this reason.
    Unknown(String),
}

impl WsLink {
    pub(super) fn new(out: mpsc::UnboundedSender<Message>) -> Self {
        Self(Arc::new(Inner {
            out,
            next: AtomicU64::new(1),
            calls: Mutex::default(),
            questions: Arc::new(Semaphore::new(MAX_QUESTIONS)),
        }))
    }

    /// Sends `frame` to the author's process.
    pub(super) fn send(&self, frame: &ToAuthor) {
        let text = serde_json::to_string(frame).expect("a frame always serializes");
        let _ = self.0.out.send(Message::Text(Utf8Bytes::from(text)));
    }

    /// Whether `call` is a number this session never gave a call.
    fn never_made(&self, call: u64) -> bool {
        call == 0 || call >= self.0.next.load(Ordering::Acquire)
    }

    fn calls<T>(&self, with: impl FnOnce(&mut HashMap<u64, Slot>) -> T) -> T {
        with(&mut self.0.calls.lock().expect("never poisoned"))
    }

    /// The end of `call`.
    pub(super) fn done(&self, call: u64, outcome: Outcome) -> Routed {
        match self.calls(|calls| calls.remove(&call)) {
            Some(slot) => {
                let _ = slot.done.send(outcome);
                Routed::Handled
            }
            // The engine stopped waiting for it (its deadline passed): the end is late.
            None if !self.never_made(call) => Routed::Handled,
            None => Routed::Unknown(format!("the end of call {call}, which was never made")),
        }
    }

    /// An audit record of `call`.
    pub(super) fn audit(&self, call: u64, event: &str, detail: &str) -> Routed {
        match self.calls(|calls| calls.get(&call).map(|slot| Arc::clone(&slot.serve))) {
            Some(serve) => {
                serve.audit(event, detail);
                Routed::Handled
            }
            None if !self.never_made(call) => Routed::Handled,
            None => Routed::Unknown(format!(
                "an audit record of call {call}, which was never made"
            )),
        }
    }

    /// Answers question `ask` of `call`, in a task of its own.
    pub(super) fn ask(&self, call: u64, ask: u64, question: Question) -> Routed {
        let serve = self.calls(|calls| calls.get(&call).map(|slot| Arc::clone(&slot.serve)));
        let serve = match serve {
            Some(serve) => serve,
            None if !self.never_made(call) => {
                let answer = Answer::Refused {
                    kind: "ended".to_owned(),
                    message: "the call has ended: the engine stopped waiting for it".to_owned(),
                };
                self.send(&ToAuthor::Answer { call, ask, answer });
                return Routed::Handled;
            }
            None => {
                return Routed::Unknown(format!("a question of call {call}, which was never made"))
            }
        };
        let Ok(permit) = Arc::clone(&self.0.questions).try_acquire_owned() else {
            let answer = Answer::Refused {
                kind: "busy".to_owned(),
                message: format!("the session has {MAX_QUESTIONS} questions waiting already"),
            };
            self.send(&ToAuthor::Answer { call, ask, answer });
            return Routed::Handled;
        };
        let link = self.clone();
        tokio::spawn(async move {
            let answer = serve.answer(question).await;
            let mut frame = ToAuthor::Answer { call, ask, answer };
            if serde_json::to_string(&frame).map_or(0, |text| text.len()) > MAX_FRAME_BYTES {
                let answer = Answer::Refused {
                    kind: "too_large".to_owned(),
                    message: format!(
                        "the answer is larger than the {MAX_FRAME_BYTES} bytes a frame carries"
                    ),
                };
                frame = ToAuthor::Answer { call, ask, answer };
            }
            link.send(&frame);
            drop(permit);
        });
        Routed::Handled
    }

    /// Ends every call under way: the session is gone, and each answers `Disconnected`.
    pub(super) fn close(&self) {
        self.calls(HashMap::clear);
    }
}

impl DevLink for WsLink {
    fn call(
        &self,
        mut frame: CallFrame,
        serve: DevServe,
    ) -> BoxFuture<'static, Result<Outcome, Disconnected>> {
        let call = self.0.next.fetch_add(1, Ordering::AcqRel);
        frame.call = call;
        let text = serde_json::to_string(&ToAuthor::Call(Box::new(frame)))
            .expect("a frame always serializes");
        if text.len() > MAX_FRAME_BYTES {
            let outcome = Outcome::Err {
                kind: "invalid_arguments".to_owned(),
                message: format!(
                    "the call with its context is {} bytes, more than the {MAX_FRAME_BYTES} a development session carries",
                    text.len()
                ),
            };
            return Box::pin(std::future::ready(Ok(outcome)));
        }
        let (done, ended) = oneshot::channel();
        self.calls(|calls| {
            calls.insert(
                call,
                Slot {
                    done,
                    serve: Arc::new(serve),
                },
            )
        });
        if self
            .0
            .out
            .send(Message::Text(Utf8Bytes::from(text)))
            .is_err()
        {
            self.calls(|calls| calls.remove(&call));
            return Box::pin(std::future::ready(Err(Disconnected)));
        }
        let waiting = Waiting {
            link: self.clone(),
            call,
            ended: false,
        };
        Box::pin(async move {
            let mut waiting = waiting;
            let outcome = ended.await.map_err(|_| Disconnected);
            waiting.ended = true;
            outcome
        })
    }
}

/// A call the engine waits for: dropped before its end (the deadline passed, the turn
/// was abandoned), it tells the author's process to stop.
struct Waiting {
    link: WsLink,
    call: u64,
    ended: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let call = self.call;
        if self.link.calls(|calls| calls.remove(&call)).is_some() {
            self.link.send(&ToAuthor::Cancel { call });
        }
    }
}
