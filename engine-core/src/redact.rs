//! Keeping configured secrets out of every log line: the audit logger redacts at the
//! source, [`RedactingWriter`] redacts whatever else reaches the log (a library's debug
//! output), and [`install_redacting_panic_hook`] does the same for panic messages, which
//! the default hook would print in clear.

use std::io::{self, Write};
use std::sync::Arc;

use arc_swap::ArcSwap;
use plugin_sdk::engine::{Redact, RedactValues};
use tracing_subscriber::fmt::MakeWriter;

use crate::config::EngineConfig;

/// Every configured secret value, for the log writer (and, inside the engine, the audit
/// logger).
pub fn redactor(config: &EngineConfig) -> Arc<RedactValues> {
    redactor_with(config, [])
}

/// Every configured secret value and the `others` an engine holds outside the
/// configuration (such as its MCP server's token).
pub fn redactor_with(
    config: &EngineConfig,
    others: impl IntoIterator<Item = String>,
) -> Arc<RedactValues> {
    let secrets = config.secret_values().map(str::to_owned);
    Arc::new(RedactValues::new(secrets.chain(others)))
}

/// A `tracing_subscriber` writer that redacts every configured secret value from each
/// log line before `inner` writes it.
///
/// ```no_run
/// # let config = engine_core::config::EngineConfig::default();
/// let redact = engine_core::redactor(&config);
/// tracing_subscriber::fmt()
///     .with_writer(engine_core::RedactingWriter::new(redact, std::io::stderr))
///     .init();
/// ```
#[derive(Clone)]
pub struct RedactingWriter<M> {
    redact: LogRedaction,
    inner: M,
}

impl<M> RedactingWriter<M> {
    /// Redacts with `redact` (a [`LogRedaction`], to follow the engine's reloads) before
    /// writing to `inner`.
    pub fn new(redact: impl Into<LogRedaction>, inner: M) -> Self {
        Self {
            redact: redact.into(),
            inner,
        }
    }
}

/// One line being written: held until it is flushed or dropped, then redacted whole (a
/// secret split across two writes is still found).
pub struct RedactingLine<W: Write> {
    redact: Arc<RedactValues>,
    buffer: Vec<u8>,
    inner: W,
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for RedactingWriter<M> {
    type Writer = RedactingLine<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingLine {
            redact: self.redact.current(),
            buffer: Vec::new(),
            inner: self.inner.make_writer(),
        }
    }
}

impl<W: Write> Write for RedactingLine<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return self.inner.flush();
        }
        let text = String::from_utf8_lossy(&self.buffer);
        let clean = self.redact.redact(&text);
        self.inner.write_all(clean.as_bytes())?;
        self.buffer.clear();
        self.inner.flush()
    }
}

impl<W: Write> Drop for RedactingLine<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Replaces the process's panic hook with one that writes what the default hook writes
/// (thread, location, message, and a backtrace when `RUST_LIB_BACKTRACE` or
/// `RUST_BACKTRACE` asks for one) to
/// stderr through a [`RedactingWriter`], so that a tool panicking with its key prints
/// `[REDACTED]`. Install it before any plugin code runs: the default hook prints the
/// message in clear, even when the engine catches the panic.
///
/// ```no_run
/// # let config = engine_core::config::EngineConfig::default();
/// engine_core::install_redacting_panic_hook(engine_core::redactor(&config));
/// ```
pub fn install_redacting_panic_hook(redact: impl Into<LogRedaction>) {
    let stderr = RedactingWriter::new(redact, io::stderr);
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let location = info
            .location()
            .map(|location| format!(" at {location}"))
            .unwrap_or_default();
        let mut report = format!(
            "thread '{}' panicked{location}:\n{}\n",
            thread.name().unwrap_or("<unnamed>"),
            crate::dispatch::panic_text(info.payload()),
        );
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            report.push_str(&format!("stack backtrace:\n{backtrace}\n"));
        }
        // One write, flushed when the line is dropped: the message is redacted whole.
        let _ = stderr.make_writer().write_all(report.as_bytes());
    }));
}

#[cfg(test)]
mod tests {
    use plugin_sdk::engine::Redact;

    use super::*;

    #[test]
    fn a_value_held_outside_the_configuration_is_redacted_like_a_secret() {
        let config = EngineConfig::parse("[agents.a]\nsecrets = { key = \"k-123\" }\n").unwrap();
        let token = "0123456789abcdef0123456789abcdef";
        let redact = redactor_with(&config, Some(token.to_owned()));
        assert_eq!(
            redact.redact(&format!("authorization: Bearer {token}, key k-123")),
            "authorization: Bearer [REDACTED], key [REDACTED]"
        );
    }
}

/// The redactor a log writer and the panic hook read for each line, which a reload of the
/// engine's configuration widens with the secrets it brings: give it to both and to
/// [`EngineBuilder::log_redaction`](crate::EngineBuilder::log_redaction).
#[derive(Clone)]
pub struct LogRedaction(Arc<ArcSwap<RedactValues>>);

impl LogRedaction {
    /// Starts with `redact`.
    pub fn new(redact: Arc<RedactValues>) -> Self {
        Self(Arc::new(ArcSwap::new(redact)))
    }

    /// The redactor now.
    pub fn current(&self) -> Arc<RedactValues> {
        self.0.load_full()
    }

    /// Redacts `secrets` too, from the next line on.
    pub(crate) fn widen(&self, secrets: &[String]) {
        self.0
            .rcu(|current| Arc::new(current.extended(secrets.iter().cloned())));
    }
}

impl From<Arc<RedactValues>> for LogRedaction {
    fn from(redact: Arc<RedactValues>) -> Self {
        Self::new(redact)
    }
}
