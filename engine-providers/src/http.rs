//! The engine's provider over HTTP (reqwest, rustls with the platform's roots): either
//! wire format, streamed or not, with retries of the request only.

use std::time::Duration;

use plugin_sdk::engine::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

use engine_core::config::ProviderConfig;
use engine_core::provider::{
    anthropic, openai, Provider, ProviderError, ProviderReply, ProviderRequest, SseSplitter, Usage,
    Wire,
};

/// The longest wait a `Retry-After` may ask for before the engine gives up instead.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The first backoff; each retry doubles it.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// The Anthropic beta that admits `input_examples` in tool definitions, sent only with
/// a catalog that carries examples.
const ANTHROPIC_EXAMPLES_BETA: &str = "advanced-tool-use-2025-11-20";

/// A provider reached over HTTP.
#[derive(Debug)]
pub struct HttpProvider {
    client: reqwest::Client,
    wire: Wire,
    url: String,
    model: String,
    headers: HeaderMap,
    stream: bool,
    max_retries: u32,
    max_response_bytes: usize,
    usd_per_million: (f64, f64),
}

impl HttpProvider {
    /// The provider `config` describes, with `api_key` if it takes one, on `client`
    /// (share one client between providers: it holds the connection pool).
    pub fn new(
        config: &ProviderConfig,
        api_key: Option<&str>,
        client: reqwest::Client,
    ) -> Result<Self, ProviderError> {
        let base = config.base_url.trim_end_matches('/');
        let url = match config.wire {
            Wire::Openai => format!("{base}/chat/completions"),
            Wire::Anthropic => format!("{base}/v1/messages"),
        };
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        let bad_key =
            |_| ProviderError::Unreachable("the API key is not a valid header value".into());
        match (config.wire, api_key) {
            (Wire::Openai, Some(key)) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(bad_key)?;
                value.set_sensitive(true);
                headers.insert("authorization", value);
            }
            (Wire::Anthropic, key) => {
                headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
                if let Some(key) = key {
                    let mut value = HeaderValue::from_str(key).map_err(bad_key)?;
                    value.set_sensitive(true);
                    headers.insert("x-api-key", value);
                }
            }
            (Wire::Openai, None) => {}
        }
        Ok(Self {
            client,
            wire: config.wire,
            url,
            model: config.model.clone(),
            headers,
            stream: config.stream,
            max_retries: config.max_retries,
            max_response_bytes: config.max_response_bytes,
            usd_per_million: (config.usd_per_million_input, config.usd_per_million_output),
        })
    }

    /// A new client for providers: rustls with the platform's roots, a connect timeout,
    /// and no redirect followed (reqwest strips `Authorization` from a redirect to
    /// another host, but not Anthropic's `x-api-key`, and a 307 sends the conversation
    /// again: a provider that redirects is an error, not a hop). The engine shares one
    /// between its providers and its tools' model gateway.
    pub fn client() -> reqwest::Client {
        install_tls_provider();
        reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("the TLS roots load")
    }

    async fn attempt(
        &self,
        body: &bytes::Bytes,
        examples_beta: bool,
        text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ProviderReply, ProviderError> {
        let mut request = self.client.post(&self.url).headers(self.headers.clone());
        if examples_beta {
            request = request.header("anthropic-beta", ANTHROPIC_EXAMPLES_BETA);
        }
        let response = request
            .body(body.clone())
            .send()
            .await
            .map_err(|error| ProviderError::Unreachable(without_url(error)))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after_ms = retry_after(response.headers());
            // The start of the body says why; the rest is not read.
            let mut body = Vec::new();
            let mut response = response;
            while body.len() < 4096 {
                match response.chunk().await {
                    Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                    _ => break,
                }
            }
            // Whole (up to 4 KiB), not cut: the engine redacts secrets from it where
            // it leaves, and a key cut in two would no longer be found. It is cut after.
            return Err(ProviderError::Status {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).into_owned(),
                retry_after_ms,
            });
        }
        if self.stream {
            match self.wire {
                Wire::Openai => {
                    self.read_stream::<openai::StreamAssembler>(response, text)
                        .await
                }
                Wire::Anthropic => {
                    self.read_stream::<anthropic::StreamAssembler>(response, text)
                        .await
                }
            }
        } else {
            let body = self.read_whole(response).await?;
            let reply = match self.wire {
                Wire::Openai => openai::parse_reply(&body)?,
                Wire::Anthropic => anthropic::parse_reply(&body)?,
            };
            if !reply.text.is_empty() {
                text(&reply.text);
            }
            Ok(reply)
        }
    }

    async fn read_whole(&self, mut response: reqwest::Response) -> Result<Vec<u8>, ProviderError> {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(broken)? {
            body.extend_from_slice(&chunk);
            if body.len() > self.max_response_bytes {
                return Err(ProviderError::TooLarge(self.max_response_bytes));
            }
        }
        Ok(body)
    }

    /// Reads a streamed answer into `A`, at most `max_response_bytes` of it.
    async fn read_stream<A: Assemble>(
        &self,
        mut response: reqwest::Response,
        text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ProviderReply, ProviderError> {
        let mut splitter = SseSplitter::default();
        let mut assembler = A::default();
        let mut on_event = |_: &str, data: &str| assembler.event(data, text);
        let mut read = 0;
        while let Some(chunk) = response.chunk().await.map_err(broken)? {
            read += chunk.len();
            if read > self.max_response_bytes {
                return Err(ProviderError::TooLarge(self.max_response_bytes));
            }
            splitter.feed(&chunk, &mut on_event)?;
        }
        splitter.finish(&mut on_event)?;
        assembler.finish()
    }
}

/// Installs ring as rustls's process-wide crypto provider, unless one is installed
/// already. reqwest is built without a provider of its own (the workspace's Cargo.toml
/// says why): a client built before this would panic. The engine calls it before it runs
/// any plugin code, so a plugin's own reqwest client finds the provider too.
pub fn install_tls_provider() {
    // An error only says that a provider is installed, which is all this asks for.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The engine's one client (its connection pool), made on first use.
pub fn shared_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(HttpProvider::client).clone()
}

impl Provider for HttpProvider {
    fn wire(&self) -> Wire {
        self.wire
    }

    fn respond<'a>(
        &'a self,
        request: ProviderRequest<'a>,
        text: &'a mut (dyn FnMut(&str) + Send),
    ) -> BoxFuture<'a, Result<ProviderReply, ProviderError>> {
        Box::pin(async move {
            let body = match self.wire {
                Wire::Openai => openai::request_body(&self.model, &request, self.stream),
                Wire::Anthropic => anthropic::request_body(&self.model, &request, self.stream),
            };
            // Built once, shared by the retries.
            let body = bytes::Bytes::from(body);
            // Inside a JSON string a quote is escaped, so the key's text with its quotes
            // appears only as a key: the catalog carries examples.
            let examples_beta =
                self.wire == Wire::Anthropic && request.tools.contains("\"input_examples\":");
            let mut backoff = FIRST_BACKOFF;
            let mut retries = 0;
            loop {
                match self.attempt(&body, examples_beta, text).await {
                    Err(error) if error.retryable() && retries < self.max_retries => {
                        let wait = match &error {
                            ProviderError::Status {
                                retry_after_ms: Some(ms),
                                ..
                            } => Duration::from_millis(*ms),
                            _ => backoff,
                        };
                        if wait > MAX_RETRY_AFTER {
                            return Err(error);
                        }
                        tracing::warn!(target: "model", %error, wait_ms = wait.as_millis() as u64, "retrying the model request");
                        tokio::time::sleep(wait).await;
                        backoff *= 2;
                        retries += 1;
                    }
                    result => return result,
                }
            }
        })
    }

    fn cost_usd(&self, usage: Usage) -> f64 {
        let (input, output) = self.usd_per_million;
        usage.input_tokens as f64 * input / 1e6 + usage.output_tokens as f64 * output / 1e6
    }
}

/// A broken body read: the stream was cut.
fn broken(error: reqwest::Error) -> ProviderError {
    ProviderError::Truncated(without_url(error))
}

/// reqwest's message without the URL, which may carry a key in its query.
fn without_url(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// What `Retry-After` (seconds) or `retry-after-ms` asks for, in milliseconds.
fn retry_after(headers: &HeaderMap) -> Option<u64> {
    let header = |name| {
        headers
            .get(name)
            .and_then(|value: &HeaderValue| value.to_str().ok())
    };
    if let Some(ms) = header("retry-after-ms").and_then(|ms| ms.trim().parse::<f64>().ok()) {
        return Some(ms.max(0.0) as u64);
    }
    header(RETRY_AFTER.as_str())
        .and_then(|secs| secs.trim().parse::<f64>().ok())
        .map(|secs| (secs.max(0.0) * 1000.0) as u64)
}

/// A wire format's stream assembler: the data of each event in, the reply out.
trait Assemble: Default {
    /// Takes one event's data, handing its text to `text`.
    fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError>;
    /// The reply, once the stream ended.
    fn finish(self) -> Result<ProviderReply, ProviderError>;
}

impl Assemble for openai::StreamAssembler {
    fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        Self::event(self, data, text)
    }
    fn finish(self) -> Result<ProviderReply, ProviderError> {
        Self::finish(self)
    }
}

impl Assemble for anthropic::StreamAssembler {
    fn event(&mut self, data: &str, text: &mut dyn FnMut(&str)) -> Result<(), ProviderError> {
        Self::event(self, data, text)
    }
    fn finish(self) -> Result<ProviderReply, ProviderError> {
        Self::finish(self)
    }
}
