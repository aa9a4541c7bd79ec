//! The engine's end of one session's socket, as the kernel calls through it: each call
//! a frame out and a slot waiting for its end, the questions it asks answered from its
//! context. Frames out wait in a short queue for the session's writer: a process that
//! stops reading fills it, and the session ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::ws::{Message, Utf8Bytes};
use engine_core::dev::{DevLink, DevServe, Disconnected};
use plugin_dev_wire::{Answer, CallFrame, Outcome, Question, ToAuthor, MAX_FRAME_BYTES};
use plugin_sdk::engine::BoxFuture;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_util::sync::CancellationToken;

/// The most questions one session has waiting for an answer at once.
const MAX_QUESTIONS: usize = 64;

/// The most frames waiting to be written to one session (each at most 1 MiB).
pub(super) const MAX_QUEUED_FRAMES: usize = 32;

/// The most audit records one call writes; more are dropped, and the drop logged once.
const MAX_AUDITS_PER_CALL: usize = 256;

/// The link of one session: cheap to clone, shared by the kernel's calls and the
/// session's loop.
#[derive(Clone)]
pub(super) struct WsLink(Arc<Inner>);

struct Inner {
    out: mpsc::Sender<Message>,
    next: AtomicU64,
    calls: Mutex<HashMap<u64, Slot>>,
    questions: Arc<Semaphore>,
    /// Set once the session ends: a call made after it is answered at once.
    closed: AtomicBool,
    /// Cancelled when a frame finds the queue full: the process stopped reading.
    wedged: CancellationToken,
}

/// A call under way: where its end goes, and what answers its questions.
struct Slot {
    done: oneshot::Sender<Outcome>,
    serve: Arc<DevServe>,
    audits: Arc<AtomicUsize>,
}

/// What the session's loop does with a frame about a call.
pub(super) enum Routed {
    /// Handled.
    Handled,
    /// About a call never made: the session is closed with this reason.
    Unknown(String),
}

impl WsLink {
    pub(super) fn new(out: mpsc::Sender<Message>, wedged: CancellationToken) -> Self {
        Self(Arc::new(Inner {
            out,
            next: AtomicU64::new(1),
            calls: Mutex::default(),
            questions: Arc::new(Semaphore::new(MAX_QUESTIONS)),
            closed: AtomicBool::new(false),
            wedged,
        }))
    }

    /// Queues `frame` for the author's process.
    pub(super) fn send(&self, frame: &ToAuthor) -> bool {
        let text = serde_json::to_string(frame).expect("a frame always serializes");
        self.queue(Message::Text(Utf8Bytes::from(text)))
    }

    /// Queues `message`: `false` when the session is over, or when the queue is full,
    /// which ends it.
    pub(super) fn queue(&self, message: Message) -> bool {
        match self.0.out.try_send(message) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.0.wedged.cancel();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
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
        let slot = self.calls(|calls| {
            calls
                .get(&call)
                .map(|slot| (Arc::clone(&slot.serve), Arc::clone(&slot.audits)))
        });
        match slot {
            Some((serve, audits)) => {
                let written = audits.fetch_add(1, Ordering::Relaxed);
                if written < MAX_AUDITS_PER_CALL {
                    serve.audit(event, detail);
                } else if written == MAX_AUDITS_PER_CALL {
                    tracing::warn!(
                        call,
                        "a dev session's call wrote {MAX_AUDITS_PER_CALL} audit records; the rest are dropped"
                    );
                }
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
        let refuse = |kind: &str, message: String| {
            let answer = Answer::Refused {
                kind: kind.to_owned(),
                message,
            };
            self.send(&ToAuthor::Answer { call, ask, answer });
            Routed::Handled
        };
        let serve = match serve {
            Some(serve) => serve,
            None if !self.never_made(call) => {
                let why = "the call has ended: the engine stopped waiting for it";
                return refuse("ended", why.to_owned());
            }
            None => {
                return Routed::Unknown(format!("a question of call {call}, which was never made"))
            }
        };
        let Ok(permit) = Arc::clone(&self.0.questions).try_acquire_owned() else {
            let why = format!("the session has {MAX_QUESTIONS} questions waiting already");
            return refuse("busy", why);
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

    /// Ends every call under way, and every one made from now on: the session is gone,
    /// and each answers `Disconnected`.
    pub(super) fn close(&self) {
        self.calls(|calls| {
            self.0.closed.store(true, Ordering::Release);
            calls.clear();
        });
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
        let slot = Slot {
            done,
            serve: Arc::new(serve),
            audits: Arc::default(),
        };
        // Under the calls' lock, which `close` takes to clear them: a call either goes in
        // before the session closes, and is answered by the close, or sees it closed.
        let open = self.calls(|calls| {
            let open = !self.0.closed.load(Ordering::Acquire);
            if open {
                calls.insert(call, slot);
            }
            open
        });
        if !open || !self.queue(Message::Text(Utf8Bytes::from(text))) {
            self.calls(|calls| calls.remove(&call));
            return Box::pin(std::future::ready(Err(Disconnected::Unsent)));
        }
        let waiting = Waiting {
            link: self.clone(),
            call,
            ended: false,
        };
        Box::pin(async move {
            let mut waiting = waiting;
            let outcome = ended.await.map_err(|_| Disconnected::Unanswered);
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
