//! Reading a request's body whole by a deadline, inside the in-flight bound: a client that
//! sends its body slowly (or never) gives its place back when the deadline passes.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::{BodyExt, LengthLimitError, Limited};

/// Reads `request`'s body, at most `max_bytes` of it, within `timeout` from now, then
/// hands the request on with the body in memory. A body not read by then is answered 408;
/// one over `max_bytes`, 413.
pub(super) async fn read_body(
    timeout: Duration,
    max_bytes: usize,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(timeout, Limited::new(body, max_bytes).collect()).await;
    match read {
        Ok(Ok(body)) => next.run(Request::from_parts(parts, Body::new(body))).await,
        Err(_elapsed) => refusal(
            StatusCode::REQUEST_TIMEOUT,
            format!("the request body did not arrive within {timeout:?}"),
        ),
        Ok(Err(error)) if error.is::<LengthLimitError>() => refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is over {max_bytes} bytes"),
        ),
        Ok(Err(error)) => refusal(
            StatusCode::BAD_REQUEST,
            format!("the request body could not be read: {error}"),
        ),
    }
}

fn refusal(status: StatusCode, message: String) -> Response {
    Response::builder()
        .status(status)
        // The rest of the body is not read: the connection cannot carry another request.
        .header(header::CONNECTION, "close")
        .body(Body::from(message))
        .expect("a valid response")
}
