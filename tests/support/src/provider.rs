//! A model provider double for engines run as processes: OpenAI's chat completions on a
//! real socket, which charges every answer its whole `max_tokens` and can hold its answers
//! until the test lets them go.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// What the double prices each request's input at, in tokens.
pub const INPUT_TOKENS: u64 = 10;

/// A provider double on `127.0.0.1`; its threads end with the test process.
pub struct Provider {
    url: String,
    seen: Arc<Mutex<Vec<Value>>>,
    open: Arc<(Mutex<bool>, Condvar)>,
    arrived: Receiver<()>,
}

impl Provider {
    /// A provider that answers at once.
    pub fn start() -> Self {
        Self::listen(true)
    }

    /// A provider that holds every answer until [`release`](Self::release).
    pub fn held() -> Self {
        Self::listen(false)
    }

    fn listen(open: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let open = Arc::new((Mutex::new(open), Condvar::new()));
        let (arrival, arrived) = mpsc::channel();
        std::thread::spawn({
            let seen = Arc::clone(&seen);
            let open = Arc::clone(&open);
            move || {
                for stream in listener.incoming().flatten() {
                    let (seen, open, arrival) =
                        (Arc::clone(&seen), Arc::clone(&open), arrival.clone());
                    std::thread::spawn(move || answer(stream, &seen, &open, &arrival));
                }
            }
        });
        Self {
            url,
            seen,
            open,
            arrived,
        }
    }

    /// The base URL, for `[gateway] base_url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How many requests reached the provider.
    pub fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Waits until a request arrives (at most 30 s: a hang is a failure, not a wait).
    pub fn wait_for_request(&self) {
        self.arrived
            .recv_timeout(Duration::from_secs(30))
            .expect("a request reached the provider");
    }

    /// Lets every held answer go, and answers at once from now on.
    pub fn release(&self) {
        let (open, changed) = &*self.open;
        *open.lock().unwrap() = true;
        changed.notify_all();
    }
}

/// Reads one request, records it, waits until answers are let go, and answers it.
fn answer(
    stream: TcpStream,
    seen: &Mutex<Vec<Value>>,
    open: &(Mutex<bool>, Condvar),
    arrival: &Sender<()>,
) {
    let mut reader = BufReader::new(&stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(request.clone());
    let _ = arrival.send(());
    let (open, changed) = open;
    drop(
        changed
            .wait_while(open.lock().unwrap(), |open| !*open)
            .unwrap(),
    );
    let question = request["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .map_or("", |message| message["content"].as_str().unwrap_or(""));
    let answer = json!({
        "model": request["model"],
        "choices": [{ "message": { "role": "assistant", "content": format!("answer to {question}") } }],
        "usage": { "prompt_tokens": INPUT_TOKENS, "completion_tokens": request["max_tokens"] },
    })
    .to_string();
    let _ = write!(
        &stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    );
}
