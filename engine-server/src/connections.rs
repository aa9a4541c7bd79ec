//! Accepting connections: a bound on how many are open at once, and hyper given a timer,
//! so that a client sending its request head slowly, or holding an idle keep-alive
//! connection, is dropped after the header read timeout instead of holding a place.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The answer to a connection over the bound, written without waiting (a new socket's
/// send buffer is empty) before the connection is closed.
const TOO_MANY_CONNECTIONS: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n\
    content-type: text/plain\r\nconnection: close\r\ncontent-length: 58\r\n\r\n\
    the server has as many connections open as it takes: retry";

/// Serves `router` on the connections `listener` accepts, at most `max_connections` open
/// at once, until `shutdown` is cancelled; then waits for the requests being answered.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    max_connections: usize,
    header_read_timeout: Duration,
    shutdown: CancellationToken,
) {
    let open = Arc::new(Semaphore::new(max_connections));
    let mut http = http1::Builder::new();
    // The header read timeout also runs while a keep-alive connection waits for its next
    // request, so it is the idle timeout too.
    http.timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    // Every connection's task, to wait for at shutdown: each finishes the request it
    // serves (hyper's graceful shutdown), then ends.
    let connections = TaskTracker::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    pause_after(error).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let Ok(place) = Arc::clone(&open).try_acquire_owned() else {
            refuse(stream);
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        // With upgrades: a dev session's WebSocket leaves hyper once it is upgraded.
        let connection = http
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                () = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = ended {
                // A client that went away or was too slow: nothing to answer.
                tracing::debug!(%error, "an HTTP connection ended with an error");
            }
            drop(place);
        });
    }
    connections.close();
    connections.wait().await;
}

/// Answers 503 and closes (at debug level: under a flood of connections a warning each
/// would flood the log too).
fn refuse(stream: TcpStream) {
    tracing::debug!("refused a connection: as many are open as the server takes");
    // Best effort: a client that cannot take 200 bytes at once sees the connection close.
    let _ = stream.try_write(TOO_MANY_CONNECTIONS);
}

/// Waits before the next accept after `error`: none for one failed connection, a moment
/// when the process is out of file descriptors (which only closing connections frees).
async fn pause_after(error: io::Error) {
    let one_connection = matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    );
    if !one_connection {
        tracing::error!(%error, "accepting a connection failed");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_one_well_formed_response() {
        let (head, body) = std::str::from_utf8(TOO_MANY_CONNECTIONS)
            .unwrap()
            .split_once("\r\n\r\n")
            .unwrap();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
    }
}
