//! `GET /v1/extensions`: every external tool file and drop-in provider file, its state
//! and its error, as JSON, so that a person (or a UI) sees why a dropped-in file offers
//! nothing.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use engine_core::Engine;
use serde_json::{json, Value};

/// The route, over `engine`.
pub(super) fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        .route("/v1/extensions", get(extensions))
        .with_state(engine)
}

/// `{"files": [{"path", "kind", "state", "error", "tools"}], "tools": [...], "providers":
/// [{"path", "name", "state", "error", "used_by"}]}`: each offered tool with its file, and
/// whether its schema is strict-compatible; each drop-in provider file with its state.
async fn extensions(State(engine): State<Arc<Engine>>) -> Json<Value> {
    Json(status(&engine))
}

/// What `GET /v1/extensions` answers (the admin API's `/v1/admin/extensions` too).
pub(crate) fn status(engine: &Engine) -> Value {
    let installed = engine.extensions();
    let tools: Vec<Value> = installed
        .tools()
        .iter()
        .map(|tool| {
            json!({
                "id": tool.id(),
                "wire_name": tool.wire_name(),
                "description": tool.description(),
                "file": tool.source(),
                "strict": tool.not_strict().is_none(),
                "not_strict": tool.not_strict(),
                "gemini": tool.gemini_problem().is_none(),
            })
        })
        .collect();
    json!({
        "files": installed.files(),
        "tools": tools,
        "providers": engine.provider_files(),
    })
}
