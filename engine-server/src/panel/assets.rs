//! The panel's stylesheet and script, embedded in the binary (no CDN: the panel works
//! offline), served with a lifetime of a day.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

/// The stylesheet's path, as pages link it.
pub(crate) const STYLESHEET: &str = "/assets/panel.css";
/// The script's path.
pub(crate) const SCRIPT: &str = "/assets/panel.js";

pub(crate) fn router() -> Router {
    Router::new()
        .route(
            STYLESHEET,
            get(|| asset("text/css; charset=utf-8", include_str!("assets/panel.css"))),
        )
        .route(
            SCRIPT,
            get(|| {
                asset(
                    "text/javascript; charset=utf-8",
                    include_str!("assets/panel.js"),
                )
            }),
        )
}

async fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "max-age=86400"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
}
