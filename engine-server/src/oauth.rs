//! The OAuth broker's two routes, which a person's browser takes (outside the bearer
//! token: a browser has none): `GET /oauth/connect/{id}`, the link a tool hands the
//! model, which sends the browser to the provider with the sign-in's `state` also in a
//! cookie named for that sign-in; and `GET /oauth/callback`, where the provider sends it
//! back, which takes the code once, and only from the browser that started the sign-in.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use engine_core::oauth::{cookie_name, CallbackError, CALLBACK_PATH, CONNECT_PATH};
use engine_core::Engine;
use serde::Deserialize;

/// The routes, over `engine`.
pub(super) fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        .route(&format!("{CONNECT_PATH}{{id}}"), get(connect))
        .route(CALLBACK_PATH, get(callback))
        .with_state(engine)
}

/// A page for the person in the browser: what happened, in words; never a secret.
fn page(status: StatusCode, text: &str) -> Response {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let body =
        format!("<!doctype html><meta charset=\"utf-8\"><title>Sign-in</title><p>{escaped}</p>");
    (status, [(header::CACHE_CONTROL, "no-store")], Html(body)).into_response()
}

fn refused(error: &CallbackError) -> Response {
    let status = match error {
        CallbackError::Unknown | CallbackError::OtherBrowser | CallbackError::Refused(_) => {
            StatusCode::BAD_REQUEST
        }
        CallbackError::Failed(_) => StatusCode::BAD_GATEWAY,
    };
    page(status, &error.to_string())
}

async fn connect(State(engine): State<Arc<Engine>>, Path(id): Path<String>) -> Response {
    match engine.oauth_connect(&id).await {
        Ok(started) => (
            StatusCode::FOUND,
            [
                (header::LOCATION, started.redirect),
                // Lax: sent on the provider's redirect back (a top-level GET), not on a
                // request another site makes.
                (header::SET_COOKIE, started.cookie),
                (header::CACHE_CONTROL, "no-store".to_owned()),
            ],
        )
            .into_response(),
        Err(error) => refused(&error),
    }
}

/// What the provider sends back.
#[derive(Deserialize)]
struct Callback {
    state: Option<String>,
    code: Option<String>,
    error: Option<String>,
}

async fn callback(
    State(engine): State<Arc<Engine>>,
    headers: HeaderMap,
    query: Result<Query<Callback>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(callback)) = query else {
        return page(StatusCode::BAD_REQUEST, "this is not a sign-in's callback");
    };
    if let Some(error) = callback.error {
        // The person said no, or the provider refused: nothing is kept.
        let error: String = error
            .chars()
            .filter(char::is_ascii_graphic)
            .take(64)
            .collect();
        return page(
            StatusCode::BAD_REQUEST,
            &format!("the provider did not grant access ({error}): nothing was connected"),
        );
    }
    let (Some(state), Some(code)) = (callback.state, callback.code) else {
        return page(StatusCode::BAD_REQUEST, "this is not a sign-in's callback");
    };
    let cookie = crate::cookies::cookie(&headers, &cookie_name(&state));
    match engine.oauth_callback(&state, cookie, &code).await {
        // The cookie expires with the link: nothing to clear.
        Ok(key) => page(
            StatusCode::OK,
            &format!(
                "Connected `{}`. You can close this window and go back to the conversation.",
                key.provider
            ),
        ),
        Err(error) => refused(&error),
    }
}
