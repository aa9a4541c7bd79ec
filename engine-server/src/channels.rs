//! Channels (plugin API version 0, unstable): `POST /channels/{name}` hands the request
//! to the channel's adapter, runs the turn it asks for with the agent the configuration
//! mounts it on, and answers what the adapter makes of the finished turn. Behind the
//! turn routes' guards (the bearer token, the in-flight bound, the body deadline, `Host`
//! and `Origin`), under the agent's limits, budget and deadline.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use engine_core::{CancellationToken, Engine, Stop, TurnControl, TurnEvent};
use plugin_sdk::channel::{ActionReport, ChannelRequest, ChannelResponse, FinishedTurn};

use super::ids::{valid_id, CHANNEL_MARK};
use super::problem::problem;

/// The route, over `engine`; turns under way are cancelled when `shutdown` is.
pub(super) fn router(engine: Arc<Engine>, shutdown: CancellationToken) -> Router {
    Router::new()
        .route("/channels/{name}", post(channel))
        .with_state(Served { engine, shutdown })
}

/// Headers a channel's adapter is not given: the engine's token, and the caller's
/// credentials for other services.
const WITHHELD: [header::HeaderName; 3] = [
    header::AUTHORIZATION,
    header::PROXY_AUTHORIZATION,
    header::COOKIE,
];

#[derive(Clone)]
struct Served {
    engine: Arc<Engine>,
    shutdown: CancellationToken,
}

async fn channel(
    State(Served { engine, shutdown }): State<Served>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some((channel, agent)) = engine.channel(&name) else {
        return problem(
            StatusCode::NOT_FOUND,
            &format!("no channel `{name}` is mounted"),
        );
    };
    let adapter = channel.adapter;
    // The engine's own credentials stay with the engine: a plugin gets the request's
    // other headers.
    let request = ChannelRequest::new(
        headers
            .iter()
            .filter(|(name, _)| !WITHHELD.contains(name))
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect(),
        body.to_vec(),
    );
    // The adapter is a plugin's code: a panic in it is its channel's failure, not the
    // connection's.
    let mut inbound = match std::panic::catch_unwind(AssertUnwindSafe(|| adapter.inbound(&request)))
    {
        Ok(Ok(inbound)) => inbound,
        Ok(Err(refused)) => return response(refused),
        Err(_) => return adapter_panicked(&name),
    };
    // Each channel's conversation ids are its own: two channels, or a channel and the
    // turn route, do not share a history by a coincidence of ids. The id the engine keeps
    // is checked as the turn route checks its ids.
    let kept_as = format!("{name}{CHANNEL_MARK}{}", inbound.conversation);
    if !valid_id(&inbound.conversation) || !valid_id(&kept_as) || !valid_id(&inbound.subscriber) {
        tracing::warn!(
            channel = name,
            "a channel gave a conversation or subscriber id the engine does not accept"
        );
        return problem(
            StatusCode::BAD_REQUEST,
            "the channel's conversation id (kept as `<channel>:<id>`) or subscriber id is not 1 to 128 of letters, digits and `-_.:@`",
        );
    }
    let turn = match engine.turn(agent) {
        Ok(turn) => turn
            .in_conversation(inbound.subscriber.clone(), kept_as)
            .via(&name, &inbound.conversation),
        Err(unknown) => return problem(StatusCode::INTERNAL_SERVER_ERROR, &unknown.to_string()),
    };
    let turn = match inbound.locale.clone() {
        Some(locale) => turn.with_locale(locale),
        None => turn,
    };
    let turn = match engine.attach(turn, std::mem::take(&mut inbound.attachments)) {
        Ok(turn) => turn,
        Err(refused) => return super::turns::attachment_refused(&refused),
    };
    let control = TurnControl {
        cancel: shutdown.child_token(),
        ..TurnControl::default()
    };
    // As on the turn route: the turn runs on its own task, so a client that goes cancels
    // it (through this guard) instead of dropping it halfway.
    let _gone = control.cancel.clone().drop_guard();
    let conversation = inbound.conversation.clone();
    let finished = tokio::spawn(async move {
        let mut actions = Vec::new();
        let mut collect = |event: TurnEvent| {
            let report = match event {
                TurnEvent::ActionPerformed { action, .. } => Some((action, "performed")),
                TurnEvent::ActionFailed {
                    action, outcome, ..
                } => Some((action, outcome)),
                TurnEvent::ActionDropped { action, .. } => Some((action, "dropped")),
                _ => None,
            };
            if let Some((action, outcome)) = report {
                actions.push(ActionReport {
                    action,
                    outcome: outcome.to_owned(),
                });
            }
        };
        let summary = engine
            .converse(&turn, Some(&inbound.message), &control, &mut collect)
            .await;
        // Refused before it began (another turn of its conversation is under way):
        // nothing for the adapter to answer.
        if let Stop::Busy { message } = summary.stop {
            return Err(message);
        }
        let stop = serde_json::to_value(&summary.stop)
            .ok()
            .and_then(|stop| stop.get("reason")?.as_str().map(str::to_owned))
            .unwrap_or_default();
        Ok(FinishedTurn {
            conversation,
            reply: summary.reply,
            stop,
            actions,
        })
    })
    .await;
    let finished = match finished {
        Ok(Ok(finished)) => finished,
        Ok(Err(busy)) => return problem(StatusCode::CONFLICT, &busy),
        Err(_) => return problem(StatusCode::INTERNAL_SERVER_ERROR, "the turn failed"),
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| adapter.respond(&finished))) {
        Ok(answer) => response(answer),
        Err(_) => adapter_panicked(&name),
    }
}

fn response(answer: ChannelResponse) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(header::CONTENT_TYPE, answer.content_type)],
        answer.body,
    )
        .into_response()
}

#[cold]
fn adapter_panicked(name: &str) -> Response {
    tracing::error!(channel = name, "a channel's adapter panicked");
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        &format!("the channel `{name}` failed"),
    )
}
