//! The author's side of the bridge: the options, the loop that (re)connects, and what it
//! reports.

mod bridge;
mod connection;
mod peer;
mod tools;
mod watch;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::wire::Refused;
pub use watch::Watch;

/// The variables [`DevOptions::from_env`] reads.
pub const URL_ENV: &str = "ENGINE_DEV_URL";
/// The agent's name.
pub const AGENT_ENV: &str = "ENGINE_DEV_AGENT";
/// The dev token (`engine dev-token issue`).
pub const TOKEN_ENV: &str = "ENGINE_DEV_TOKEN";

/// Where to connect and how: the engine's address, the agent, the dev token.
#[derive(Clone)]
pub struct DevOptions {
    url: String,
    agent: String,
    token: String,
    reconnect: bool,
    bound: Vec<String>,
    watch: Option<watch::Watch>,
    backoff: (Duration, Duration),
    on_event: Option<Arc<OnEvent>>,
}

/// What [`DevOptions::on_event`] is given.
type OnEvent = dyn Fn(&DevEvent) + Send + Sync;

impl fmt::Debug for DevOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DevOptions")
            .field("url", &self.url)
            .field("agent", &self.agent)
            .field("reconnect", &self.reconnect)
            .finish_non_exhaustive()
    }
}

impl DevOptions {
    /// Connect to the engine at `url` (`http://host:port`, or `ws://`), as `agent`, with
    /// the dev token `token`.
    pub fn new(url: impl Into<String>, agent: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            agent: agent.into(),
            token: token.into(),
            reconnect: true,
            bound: Vec::new(),
            watch: None,
            backoff: (Duration::from_millis(200), Duration::from_secs(10)),
            on_event: None,
        }
    }

    /// The options from `ENGINE_DEV_URL`, `ENGINE_DEV_AGENT` and `ENGINE_DEV_TOKEN`.
    pub fn from_env() -> Result<Self, DevError> {
        let read = |name: &'static str| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.is_empty())
                .ok_or(DevError::Missing(name))
        };
        Ok(Self::new(
            read(URL_ENV)?,
            read(AGENT_ENV)?,
            read(TOKEN_ENV)?,
        ))
    }

    /// Whether to reconnect after a dropped connection (the default), with backoff from
    /// 200 ms up to 10 s; without it, [`serve`] returns when the connection ends.
    pub fn reconnect(mut self, reconnect: bool) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// Runs the hook `name` (bare, or its id) for the session only, at its event and
    /// declared position (seed 003's `bindTo`), instead of in place of the agent's hook
    /// of its id (`overrides`, what every other hook does).
    pub fn bind(mut self, name: impl Into<String>) -> Self {
        self.bound.push(name.into());
        self
    }

    /// Serves through the watch loop: rebuilds as `watch` says on a source change, and
    /// swaps the session's tools and hooks without dropping it.
    pub fn watch(mut self, watch: Watch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// Reports what happens to `on_event` (the crate prints nothing itself).
    pub fn on_event(mut self, on_event: impl Fn(&DevEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(on_event));
        self
    }

    fn report(&self, event: DevEvent) {
        tracing::debug!(?event, "dev session");
        if let Some(on_event) = &self.on_event {
            on_event(&event);
        }
    }

    /// The session's WebSocket address: `url` with a `ws` scheme and the agent's route.
    fn endpoint(&self) -> Result<String, DevError> {
        let named = !self.agent.is_empty()
            && self
                .agent
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !named {
            return Err(DevError::Agent(self.agent.clone()));
        }
        let base = self.url.trim_end_matches('/');
        let rest = if let Some(rest) = base.strip_prefix("http://") {
            rest
        } else if let Some(rest) = base.strip_prefix("ws://") {
            rest
        } else {
            return Err(DevError::Url(self.url.clone()));
        };
        Ok(format!("ws://{rest}{}", crate::wire::route(&self.agent)))
    }
}

/// What [`serve`] reports as it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DevEvent {
    /// The engine welcomed the session, when it opened or after an update: the agent
    /// equips `equipped` from it, runs `hooks`, and refuses `refused`.
    Connected {
        /// The session's id.
        session: String,
        /// The tools the agent equips from it.
        equipped: Vec<String>,
        /// The hooks the agent runs from it.
        hooks: Vec<String>,
        /// The tools it refuses, and why.
        refused: Vec<Refused>,
    },
    /// The engine called a tool or a hook.
    Called {
        /// The tool's or hook's id.
        tool: String,
        /// The call's number in the session.
        call: u64,
    },
    /// A call ended.
    Finished {
        /// The call's number.
        call: u64,
        /// Whether it succeeded.
        ok: bool,
    },
    /// The watch loop rebuilt the dev binary: whether it built and now serves, and what
    /// the build printed when it failed.
    Rebuilt {
        /// Whether the new build serves the session now.
        ok: bool,
        /// What the build printed, when it failed.
        output: String,
    },
    /// The engine stopped waiting for a call.
    Cancelled {
        /// The call's number.
        call: u64,
    },
    /// The connection ended, and why; `retry_in` when it will be opened again.
    Disconnected {
        /// Why.
        reason: String,
        /// When the next attempt is made.
        retry_in: Option<Duration>,
    },
}

/// Why [`serve`] stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum DevError {
    /// An environment variable [`DevOptions::from_env`] reads is not set.
    Missing(&'static str),
    /// The engine's address is not `http://` or `ws://`.
    Url(String),
    /// The engine refused the session (a wrong, revoked or expired token; an unknown
    /// agent): retrying would not help.
    Refused(String),
    /// The connection ended, and the options say not to reconnect.
    Disconnected(String),
    /// The watch loop could not start: the binary or a directory it watches.
    Build(String),
    /// The agent's name is not one a configuration gives.
    Agent(String),
}

impl fmt::Display for DevError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(name) => write!(
                f,
                "`{name}` is not set: set {URL_ENV} (the engine's address), {AGENT_ENV} and {TOKEN_ENV} (from `engine dev-token issue --agent <agent>`)"
            ),
            Self::Url(url) => write!(
                f,
                "`{url}` is not the engine's address: give http://host:port (or ws://host:port)"
            ),
            Self::Refused(why) => write!(f, "the engine refused the session: {why}"),
            Self::Disconnected(why) => write!(f, "the session ended: {why}"),
            Self::Build(why) => write!(f, "the watch loop could not start: {why}"),
            Self::Agent(agent) => write!(
                f,
                "`{agent}` is not an agent's name: give the name as the configuration spells it"
            ),
        }
    }
}

impl std::error::Error for DevError {}

/// Serves every tool this binary links to the engine's agent, as `options` say, until
/// the engine refuses the session, or the connection ends and `options` say not to
/// reconnect; drop the future to stop.
pub async fn serve(options: DevOptions) -> Result<(), DevError> {
    let served = Arc::new(tools::Served::linked(&options.bound));
    if watch::is_child() {
        return watch::serve_as_child(&options, served).await;
    }
    if let Some(watch) = &options.watch {
        return watch::supervise(&options, watch).await;
    }
    let endpoint = options.endpoint()?;
    let mut delay = options.backoff.0;
    loop {
        let ended = connection::run(&endpoint, &options, Arc::clone(&served)).await;
        let reason = match ended {
            connection::Ended::Refused(why) => return Err(DevError::Refused(why)),
            connection::Ended::Opened(reason) => {
                // A session that opened starts the backoff again.
                delay = options.backoff.0;
                reason
            }
            connection::Ended::NotOpened(reason) => reason,
        };
        if !options.reconnect {
            options.report(DevEvent::Disconnected {
                reason: reason.clone(),
                retry_in: None,
            });
            return Err(DevError::Disconnected(reason));
        }
        options.report(DevEvent::Disconnected {
            reason,
            retry_in: Some(delay),
        });
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(options.backoff.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn told_not_to_reconnect_it_returns_when_the_connection_ends() {
        // A port nothing listens on: the connection is refused at once.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let events = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = Arc::clone(&events);
        let options = DevOptions::new(format!("http://{address}"), "bot", "dev_x_y")
            .reconnect(false)
            .on_event(move |event| seen.lock().unwrap().push(event.clone()));
        let ended = tokio::time::timeout(Duration::from_secs(10), serve(options))
            .await
            .expect("it does not retry");
        assert!(matches!(ended, Err(DevError::Disconnected(_))), "{ended:?}");
        let events = events.lock().unwrap();
        assert!(
            matches!(
                events.as_slice(),
                [DevEvent::Disconnected { retry_in: None, .. }]
            ),
            "{events:?}"
        );
    }

    #[test]
    fn an_agent_name_that_could_change_the_route_is_refused() {
        let options = DevOptions::new("http://127.0.0.1:1", "bot/../other", "t");
        assert!(matches!(options.endpoint(), Err(DevError::Agent(_))));
        let options = DevOptions::new("https://engine.example", "bot", "t");
        assert!(matches!(options.endpoint(), Err(DevError::Url(_))));
    }
}
