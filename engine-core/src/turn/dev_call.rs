//! Calling a dev session's tool: the same checks, deadline and cancellation as a linked
//! tool's, the call's context sent with it and served while it runs, and the state it
//! wrote kept only when it succeeds.

use std::sync::Arc;

use plugin_dev_wire::Outcome;
use serde::de::IgnoredAny;

use super::context::DevCallee;
use super::{Call, Runtime, Turn};
use crate::dev::{DevServe, DevTool, Disconnected, MAX_CALLS_PER_SESSION};
use crate::dispatch::{self, Bounds, CallError, CallErrorKind};

/// What the model reads when the session went away before the call ended.
const DISCONNECTED: &str = "the development session disconnected before the call ended; the tool is no longer offered until its developer reconnects";

impl Runtime {
    /// Runs `call` of the session tool `tool`.
    pub(super) async fn call_dev(
        &self,
        turn: &Turn,
        tool: Arc<DevTool>,
        call: Call<'_>,
    ) -> Result<String, CallError> {
        let bounds = Bounds {
            deadline: call.deadline,
            cancel: call.cancel,
            limits: &self.registry.limits,
        };
        dispatch::admit(&*tool, call.arguments, &bounds)?;
        if turn.conversation.is_none() && tool.decl().needs.conversation {
            return Err(CallError::new(
                CallErrorKind::UnknownTool,
                format!(
                    "`{}` works only in a conversation, and this call is in none",
                    tool.id()
                ),
            ));
        }
        // Refused rather than queued: a queue would hold the turn for a session's sake.
        let Ok(_permit) = tool.session().in_flight().try_acquire() else {
            return Err(CallError::new(
                CallErrorKind::Failed,
                format!("the development session serving `{}` runs {MAX_CALLS_PER_SESSION} calls already; try again when one has ended", tool.wire_name()),
            ));
        };
        let (context, frame) = self.dev_context(
            turn,
            DevCallee::tool(&tool),
            call.arguments.to_owned(),
            bounds.deadline_or_default(),
            bounds.cancel,
            &Vec::new(),
        );
        let running = tool.session().link().call(frame, DevServe::new(context));
        // Past the deadline, or cancelled, the link's future is dropped: it tells the
        // author's process, whose code sees its abort signal fire.
        match dispatch::wait(&*tool, running, &bounds).await? {
            Err(Disconnected) => Err(CallError::new(
                CallErrorKind::Failed,
                DISCONNECTED.to_owned(),
            )),
            Ok(Outcome::Err { kind, message }) => Err(CallError::new(error_kind(&kind), message)),
            Ok(Outcome::Ok {
                output,
                state_writes,
            }) => {
                if serde_json::from_str::<IgnoredAny>(&output).is_err() {
                    return Err(CallError::new(
                        CallErrorKind::Output,
                        format!("`{}` answered output that is not JSON", tool.wire_name()),
                    ));
                }
                match &turn.conversation {
                    Some(at) if tool.decl().needs.conversation => {
                        let writes = plugin_dev_wire::state_writes(state_writes);
                        self.keep_writes(&*tool, &at.conversation, writes)?;
                        Ok(output)
                    }
                    _ => Ok(output),
                }
            }
        }
    }
}

/// A session call's error kind as the engine names it; any other is the tool's failure.
fn error_kind(kind: &str) -> CallErrorKind {
    match kind {
        "invalid_arguments" => CallErrorKind::InvalidArguments,
        "output" => CallErrorKind::Output,
        "panicked" => CallErrorKind::Panicked,
        _ => CallErrorKind::Failed,
    }
}
