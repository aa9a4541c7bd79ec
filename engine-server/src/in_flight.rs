//! The bound on requests served at once. A request takes a permit before it is served,
//! or is answered 503 at once; the permit goes with the answer's body, not its head: a
//! streamed answer (a turn's NDJSON, which runs up to its deadline) counts until its
//! last byte is sent or its client goes, when the server drops the body.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{header, Response, StatusCode};
use axum::middleware::Next;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Serves `request` if a permit of `permits` is free, its answer's body holding it.
pub(super) async fn bounded(
    permits: Arc<Semaphore>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let Ok(permit) = permits.try_acquire_owned() else {
        return overloaded();
    };
    next.run(request).await.map(|body| {
        Body::new(Holding {
            body,
            _permit: permit,
        })
    })
}

/// The answer to a request over the bound.
fn overloaded() -> Response<Body> {
    Response::builder()
        .status(StatusCode::SERVICE_UNAVAILABLE)
        .header(header::RETRY_AFTER, "1")
        .body(Body::from(
            "the server is serving as many requests as it takes: retry later",
        ))
        .expect("a valid response")
}

/// A body that holds its request's permit until it is dropped.
struct Holding {
    body: Body,
    _permit: OwnedSemaphorePermit,
}

impl HttpBody for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
