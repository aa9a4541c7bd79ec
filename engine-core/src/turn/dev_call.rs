//! Calling a dev session's tool: the same checks, deadline and cancellation as a linked
//! tool's, the call's context sent with it and served while it runs, and the state it
//! wrote kept only when it succeeds. A session's staged action is called twice, through
//! the same session: its stage checks the arguments, its perform runs it.

use std::sync::Arc;

use plugin_dev_wire::{ActionStep, NeedsDecl, Outcome};
use serde::de::IgnoredAny;

use super::context::DevCallee;
use super::{Call, Runtime, Turn};
use crate::dev::{DevServe, DevTool, Disconnected, MAX_CALLS_PER_SESSION};
use crate::dispatch::{self, Bounds, CallError, CallErrorKind};

/// What the model reads when the session went away before it was sent the call.
const UNSENT: &str = "the development session disconnected before the call reached it, so nothing ran; the tool is no longer offered until its developer reconnects";

/// What the model reads when the session went away while the call ran.
const UNANSWERED: &str = "the development session disconnected before the call ended, and whether it took effect is not known; the tool is no longer offered until its developer reconnects";

impl Runtime {
    /// Runs `call` of the session tool `tool`, or performs the session action `tool`
    /// staged (a call made with `Call::perform`).
    pub(super) async fn call_dev(
        &self,
        turn: &Turn,
        tool: Arc<DevTool>,
        call: Call<'_>,
    ) -> Result<String, CallError> {
        let step = match (tool.is_action(), call.perform) {
            (false, _) => None,
            (true, true) => Some(ActionStep::Perform),
            (true, false) => return Err(dispatch::staged_not_called(&*tool)),
        };
        self.run_dev(turn, &tool, call, step).await
    }

    /// Stages `call` of the session action `tool`: its arguments checked by the
    /// action's own types in the author's process, which runs nothing.
    pub(super) async fn stage_dev(
        &self,
        turn: &Turn,
        tool: &DevTool,
        call: Call<'_>,
    ) -> Result<(), CallError> {
        self.run_dev(turn, tool, call, Some(ActionStep::Stage))
            .await
            .map(drop)
    }

    async fn run_dev(
        &self,
        turn: &Turn,
        tool: &DevTool,
        call: Call<'_>,
        step: Option<ActionStep>,
    ) -> Result<String, CallError> {
        let bounds = Bounds {
            deadline: call.deadline,
            cancel: call.cancel,
            limits: &self.registry.limits,
        };
        dispatch::admit(tool, call.arguments, &bounds)?;
        // A stage runs nothing: as a linked action's, it is dropped at the perform when
        // the turn has no conversation.
        let stage = step == Some(ActionStep::Stage);
        if !stage && turn.conversation.is_none() && tool.decl().needs.conversation {
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
        // A stage reads nothing but its arguments, as a linked action's: no secret, no
        // subscriber, no audit before the reply has passed the guardrails.
        let mut callee = DevCallee::tool(tool);
        if stage {
            callee.needs = NeedsDecl::default();
            callee.secrets = &[];
        }
        let (context, mut frame) = self.dev_context(
            turn,
            callee,
            call.arguments.to_owned(),
            bounds.deadline_or_default(),
            bounds.cancel,
            &Vec::new(),
            call.history,
        );
        frame.step = step;
        let running = tool.session().link().call(frame, DevServe::new(context));
        // Past the deadline, or cancelled, the link's future is dropped: it tells the
        // author's process, whose code sees its abort signal fire.
        match dispatch::wait(tool, running, &bounds).await? {
            Err(Disconnected::Unsent) => {
                Err(CallError::new(CallErrorKind::Failed, UNSENT.to_owned()))
            }
            Err(Disconnected::Unanswered) => Err(CallError::new(
                CallErrorKind::Disconnected,
                UNANSWERED.to_owned(),
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
                // An action was sent no state, so it has none to write.
                match &turn.conversation {
                    Some(at) if tool.decl().needs.conversation && !tool.is_action() => {
                        let writes = plugin_dev_wire::state_writes(state_writes);
                        self.keep_writes(tool, &at.conversation, writes)?;
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
        "disconnected" => CallErrorKind::Disconnected,
        _ => CallErrorKind::Failed,
    }
}
