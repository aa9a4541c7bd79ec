//! The other end of a session's frames: the engine over its WebSocket, or a watching
//! supervisor over the process's standard input and output (one frame per line).

use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncWriteExt, BufReader, Lines, Stdin, Stdout};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The engine's socket.
pub(super) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Where frames go.
pub(super) enum Out {
    Socket(SplitSink<Socket, Message>),
    Pipe(Stdout),
}

/// Where frames come from.
pub(super) enum In {
    Socket(SplitStream<Socket>),
    Pipe(Lines<BufReader<Stdin>>),
}

/// What came in.
pub(super) enum Incoming {
    /// A frame's text.
    Frame(String),
    /// The peer ended the session, or the connection failed: why.
    Ended(String),
    /// Something the protocol does not send: the session is closed with this reason.
    Unexpected(String),
}

impl Out {
    pub(super) async fn send(&mut self, text: String) -> Result<(), String> {
        match self {
            Self::Socket(sink) => sink
                .send(Message::text(text))
                .await
                .map_err(|error| error.to_string()),
            Self::Pipe(stdout) => {
                let mut line = text.into_bytes();
                line.push(b'\n');
                stdout
                    .write_all(&line)
                    .await
                    .map_err(|error| error.to_string())?;
                stdout.flush().await.map_err(|error| error.to_string())
            }
        }
    }

    /// Closes the session with `reason` (the engine logs it); a pipe just ends.
    pub(super) async fn close(&mut self, reason: &str) {
        tracing::warn!(reason, "closing the development session");
        if let Self::Socket(sink) = self {
            let frame = CloseFrame {
                code: CloseCode::Protocol,
                reason: crate::wire::close_reason(reason).to_owned().into(),
            };
            let _ = sink.send(Message::Close(Some(frame))).await;
        }
    }
}

impl In {
    pub(super) async fn next(&mut self) -> Incoming {
        match self {
            Self::Socket(stream) => loop {
                return match stream.next().await {
                    Some(Ok(Message::Text(text))) => Incoming::Frame(text.to_string()),
                    Some(Ok(Message::Close(frame))) => Incoming::Ended(frame.map_or_else(
                        || "the engine closed the session".to_owned(),
                        |frame| format!("the engine closed the session: {}", frame.reason),
                    )),
                    Some(Ok(Message::Binary(_))) => {
                        Incoming::Unexpected("a binary frame: the protocol sends text".to_owned())
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(error)) => Incoming::Ended(error.to_string()),
                    None => Incoming::Ended("the connection closed".to_owned()),
                };
            },
            Self::Pipe(lines) => match lines.next_line().await {
                Ok(Some(line)) => Incoming::Frame(line),
                Ok(None) => Incoming::Ended("the supervisor closed the session".to_owned()),
                Err(error) => Incoming::Ended(error.to_string()),
            },
        }
    }
}
