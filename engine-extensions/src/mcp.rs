//! MCP servers as extensions: the engine connects as a client (rmcp's), lists the
//! server's tools, follows its list changes, forwards calls (and, by dropping them,
//! their cancellation), and restarts a server that exits, with backoff.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use engine_core::external::{ExternalTool, ExternalToolSpec, RunError, Runner};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, MetaObject, RequestMetaObject, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use tokio::io::AsyncReadExt as _;
use tokio::sync::{mpsc, watch};

use crate::arguments::Arguments;
use crate::command::{passed_environment, ProcessGroup};

/// How long a first connection may take before the file is reported (it keeps trying).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The wait before the first restart; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a server must stay up for its backoff to start afresh.
const STABLE: Duration = Duration::from_secs(10);
/// The most of a tool's error text passed on.
const MAX_ERROR_BYTES: usize = 4096;

/// How to reach a server, resolved from its file.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// A program speaking MCP on stdin and stdout, run in the file's directory.
    Stdio {
        program: PathBuf,
        args: Vec<String>,
        dir: PathBuf,
    },
    /// A streamable HTTP endpoint, with its bearer token.
    Http { url: String, token: Option<String> },
}

/// One server, kept across reloads while its file does not change. The connection (and
/// the program it started) lives as long as something holds its [`Shared`]: this value
/// in the loader, or the tools of an installed set, so that calls in flight on a set
/// that no longer has the server still finish.
pub(crate) struct McpServer {
    /// What it was started from, to tell whether a changed file still describes it.
    endpoint: Endpoint,
    shared: Arc<Shared>,
}

/// What the supervisor keeps up to date, and calls read.
struct Shared {
    namespace: String,
    file: PathBuf,
    state: Mutex<State>,
    /// Told each time the state changes (the loader reloads the directory).
    changed: Arc<dyn Fn() + Send + Sync>,
    max_output: usize,
    /// Whether its file asked for each call's conversation (`"context": ["conversation"]`).
    knows_conversation: bool,
    /// The task that keeps the connection up: stopped when the last holder goes.
    supervisor: OnceLock<tokio::task::AbortHandle>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(supervisor) = self.supervisor.get() {
            supervisor.abort();
        }
    }
}

#[derive(Default)]
struct State {
    /// The connection, while there is one.
    peer: Option<Peer<RoleClient>>,
    /// The tools it listed last, kept while it restarts so that calls get a clear error.
    tools: Vec<rmcp::model::Tool>,
    /// Why it is not connected, or did not list its tools.
    error: Option<String>,
    /// Whether it has ever listed its tools.
    listed: bool,
}

impl McpServer {
    /// Starts the connection to `endpoint` for the file `file`, and waits for the first
    /// attempt (at most [`CONNECT_TIMEOUT`]). `changed` is called whenever the tools or
    /// the state change afterwards. Needs a Tokio runtime.
    pub(crate) async fn start(
        namespace: String,
        file: PathBuf,
        endpoint: Endpoint,
        max_output: usize,
        knows_conversation: bool,
        changed: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let shared = Arc::new(Shared {
            namespace,
            file,
            state: Mutex::new(State::default()),
            changed,
            max_output,
            knows_conversation,
            supervisor: OnceLock::new(),
        });
        let (first, mut first_done) = watch::channel(false);
        let supervisor = tokio::spawn(supervise(Arc::downgrade(&shared), endpoint.clone(), first));
        let _ = shared.supervisor.set(supervisor.abort_handle());
        // The first attempt's outcome is in the state either way; a server slower than
        // this is reported as starting and picked up when it answers.
        let _ = tokio::time::timeout(CONNECT_TIMEOUT, first_done.wait_for(|done| *done)).await;
        Self { endpoint, shared }
    }

    /// Whether it is the server of `namespace` at `endpoint`, given each call's
    /// conversation or not as `knows_conversation` says (a file that still says so keeps
    /// it).
    pub(crate) fn is_for(
        &self,
        namespace: &str,
        endpoint: &Endpoint,
        knows_conversation: bool,
    ) -> bool {
        self.shared.namespace == namespace
            && self.endpoint == *endpoint
            && self.shared.knows_conversation == knows_conversation
    }

    /// Its tools as the engine offers them, and why some fail or were left out (if they
    /// do); or why it offers none. A tool whose name or schema the engine cannot take is
    /// left out alone, and said so.
    pub(crate) fn tools(&self) -> Result<(Vec<ExternalTool>, Option<String>), String> {
        let state = self.shared.state();
        if !state.listed {
            return Err(state
                .error
                .clone()
                .unwrap_or_else(|| "the server has not answered yet".to_owned()));
        }
        let mut tools = Vec::with_capacity(state.tools.len());
        let mut problems: Vec<String> = state.error.iter().cloned().collect();
        for tool in &state.tools {
            match self.tool(tool) {
                Ok(tool) => tools.push(tool),
                Err(error) => problems.push(format!(
                    "the server's tool `{}` is left out: {error}",
                    tool.name
                )),
            }
        }
        let problems = (!problems.is_empty()).then(|| problems.join("; "));
        Ok((tools, problems))
    }

    fn tool(&self, tool: &rmcp::model::Tool) -> Result<ExternalTool, String> {
        let schema = serde_json::Value::Object((*tool.input_schema).clone());
        let arguments = Arguments::new(&schema)?;
        let spec = ExternalToolSpec {
            namespace: self.shared.namespace.clone(),
            name: tool.name.to_string(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            summary: tool.title.clone(),
            category: None,
            input_schema: schema,
            knows_conversation: self.shared.knows_conversation,
        };
        let runner = McpRunner {
            shared: Arc::clone(&self.shared),
            name: tool.name.to_string(),
            arguments,
        };
        ExternalTool::new(spec, self.shared.file.clone(), Arc::new(runner))
            .map_err(|error| error.to_string())
    }
}

/// Keeps the connection up: connects, lists, follows list changes, and when the
/// server goes, marks its tools failing and connects again after a backoff. Holds the
/// server's state weakly: it ends when nothing else holds it.
async fn supervise(shared: Weak<Shared>, endpoint: Endpoint, first: watch::Sender<bool>) {
    let mut backoff = MIN_BACKOFF;
    loop {
        let file = match shared.upgrade() {
            Some(shared) => shared.file.clone(),
            None => return,
        };
        match connect(&file, &endpoint).await {
            Ok(connection) => {
                let up = tokio::time::Instant::now();
                follow(&shared, connection, &first).await;
                // A server that stays up a while starts the backoff afresh; one that
                // crashes as soon as it starts keeps backing off.
                if up.elapsed() >= STABLE {
                    backoff = MIN_BACKOFF;
                }
                with(&shared, |shared| {
                    shared.set_down(format!(
                        "the MCP server stopped; it is being restarted (next try in {} ms)",
                        backoff.as_millis()
                    ))
                });
            }
            Err(error) => with(&shared, |shared| shared.set_down(error)),
        }
        first.send_replace(true);
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Runs `update` on the server's state, if anything still holds it.
fn with(shared: &Weak<Shared>, update: impl FnOnce(&Shared)) {
    if let Some(shared) = shared.upgrade() {
        update(&shared);
    }
}

/// A live connection, until it ends: the first listing, then a new one on each change.
async fn follow(shared: &Weak<Shared>, connection: Connection, first: &watch::Sender<bool>) {
    let Connection {
        running,
        mut relist,
        group: _group,
    } = connection;
    let peer = running.peer().clone();
    // Protocol 2026-07-28 sends list changes on a `subscriptions/listen` stream; an
    // older server sends them on the session (the handler's `on_tool_list_changed`).
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = tokio::time::timeout(CONNECT_TIMEOUT, peer.listen(filter))
        .await
        .ok()
        .and_then(Result::ok);
    relist_tools(shared, &peer).await;
    first.send_replace(true);
    let mut quit = std::pin::pin!(running.waiting());
    loop {
        let next = async {
            match subscription.as_mut() {
                Some(subscription) => subscription.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = &mut quit => return,
            Some(()) = relist.recv() => relist_tools(shared, &peer).await,
            notification = next => match notification {
                Ok(Some(ServerNotification::ToolListChangedNotification(_))) => relist_tools(shared, &peer).await,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => subscription = None,
            },
        }
    }
}

/// Lists the server's tools (within [`CONNECT_TIMEOUT`]: a server that pages without
/// end is cut off) into its state.
async fn relist_tools(shared: &Weak<Shared>, peer: &Peer<RoleClient>) {
    let listed = match tokio::time::timeout(CONNECT_TIMEOUT, peer.list_all_tools()).await {
        Ok(Ok(tools)) => Ok(tools),
        Ok(Err(error)) => Err(format!("the MCP server did not list its tools: {error}")),
        Err(_) => Err(format!(
            "the MCP server did not list its tools within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    };
    with(shared, |shared| {
        {
            let mut state = shared.state();
            match listed {
                Ok(tools) => {
                    state.peer = Some(peer.clone());
                    state.tools = tools;
                    state.error = None;
                    state.listed = true;
                }
                Err(error) => state.error = Some(error),
            }
        }
        (shared.changed)();
    });
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // No code panics while holding it; a poisoned state is still whole.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks it down with `error`; the loader hears of it only if that changes anything.
    fn set_down(&self, error: String) {
        {
            let mut state = self.state();
            if state.peer.is_none() && state.error.as_ref() == Some(&error) {
                return;
            }
            tracing::warn!(file = %self.file.display(), "extension: {error}");
            state.peer = None;
            state.error = Some(error);
        }
        (self.changed)();
    }
}

/// The engine's side of the connection: it hears of list changes from older servers.
struct Client {
    relist: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.relist.send(());
    }
}

/// A live connection: the service, where list changes are heard, and the program's
/// process group (a stdio server's), killed when the connection is dropped.
struct Connection {
    running: RunningService<RoleClient, Client>,
    relist: mpsc::UnboundedReceiver<()>,
    group: Option<ProcessGroup>,
}

async fn connect(file: &Path, endpoint: &Endpoint) -> Result<Connection, String> {
    let (relist, relisted) = mpsc::unbounded_channel();
    let client = Client { relist };
    let connecting = async {
        match endpoint {
            Endpoint::Stdio { program, args, dir } => {
                let mut command = tokio::process::Command::new(program);
                command
                    .args(args)
                    .current_dir(dir)
                    .env_clear()
                    .envs(passed_environment())
                    .process_group(0)
                    .kill_on_drop(true);
                let (transport, stderr) = TokioChildProcess::builder(command)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|error| format!("the program could not be started: {error}"))?;
                // rmcp kills the program alone; the group goes too, with the connection.
                let group = transport.id().map(ProcessGroup);
                if let Some(stderr) = stderr {
                    tokio::spawn(log_stderr(file.to_owned(), stderr));
                }
                let running = client
                    .serve(transport)
                    .await
                    .map_err(|error| error.to_string())?;
                Ok::<_, String>((running, group))
            }
            Endpoint::Http { url, token } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(token) = token {
                    config = config.auth_header(token.clone());
                }
                // rmcp builds a reqwest client of its own, which needs rustls's provider:
                // installed here too, for a loader used before any engine is built.
                engine_providers::install_tls_provider();
                let transport = StreamableHttpClientTransport::from_config(config);
                let running = client
                    .serve(transport)
                    .await
                    .map_err(|error| error.to_string())?;
                Ok((running, None))
            }
        }
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
        Ok(Ok((running, group))) => Ok(Connection {
            running,
            relist: relisted,
            group,
        }),
        Ok(Err(error)) => Err(format!("the MCP server did not start: {error}")),
        Err(_) => Err(format!(
            "the MCP server did not answer within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

/// A stdio server's stderr, into the engine's log (which redacts secrets), line by line;
/// a line longer than [`MAX_ERROR_BYTES`] is cut, so that a server cannot grow the
/// engine's memory by writing without a newline.
async fn log_stderr(file: PathBuf, mut stderr: tokio::process::ChildStderr) {
    let mut line: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut cut = false;
    while let Ok(read) = stderr.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        for &byte in &chunk[..read] {
            if byte == b'\n' {
                let suffix = if cut { "..." } else { "" };
                tracing::info!(file = %file.display(), "mcp server: {}{suffix}", String::from_utf8_lossy(&line));
                line.clear();
                cut = false;
            } else if line.len() < MAX_ERROR_BYTES {
                line.push(byte);
            } else {
                cut = true;
            }
        }
    }
}

/// Calls one tool of a server.
struct McpRunner {
    shared: Arc<Shared>,
    name: String,
    arguments: Arguments,
}

/// The `_meta` key of a call's conversation id, for a server whose file asked for it. A
/// prefix of our own, as MCP asks of keys that are not its own.
pub const CONVERSATION_META_KEY: &str = "engine/conversation";

impl Runner for McpRunner {
    fn run(
        &self,
        arguments: &str,
        conversation: Option<&str>,
    ) -> BoxFuture<'static, Result<String, RunError>> {
        if let Err(error) = self.arguments.check(arguments) {
            return Box::pin(std::future::ready(Err(error)));
        }
        let object = match serde_json::from_str(arguments) {
            Ok(serde_json::Value::Object(object)) => object,
            _ => {
                return Box::pin(std::future::ready(Err(RunError::InvalidArguments(
                    "the arguments must be a JSON object".to_owned(),
                ))))
            }
        };
        let peer = {
            let state = self.shared.state();
            match (&state.peer, &state.error) {
                (Some(peer), _) => Ok(peer.clone()),
                (None, error) => Err(RunError::Failed(format!(
                    "the MCP server of `{}` is not available: {}; try again later",
                    self.shared.namespace,
                    error.as_deref().unwrap_or("it is starting")
                ))),
            }
        };
        let name = self.name.clone();
        let mut request = CallToolRequestParams::new(name.clone()).with_arguments(object);
        if let Some(conversation) = conversation {
            let mut meta = serde_json::Map::new();
            meta.insert(CONVERSATION_META_KEY.to_owned(), conversation.into());
            request.meta = Some(RequestMetaObject(MetaObject(meta)));
        }
        let max_output = self.shared.max_output;
        Box::pin(async move {
            let peer = peer?;
            // Dropping this future (deadline, cancellation) tells the server the call
            // is cancelled: rmcp sends `notifications/cancelled`.
            let result = peer.call_tool(request).await.map_err(|error| {
                RunError::Failed(format!(
                    "the MCP server failed the call of `{name}`: {error}"
                ))
            })?;
            output(&name, result, max_output)
        })
    }
}

/// A call's result as JSON text: the structured content when the server gives it, else
/// the text content (JSON when it is, a JSON string when not), else the content list.
fn output(
    name: &str,
    result: rmcp::model::CallToolResult,
    max_output: usize,
) -> Result<String, RunError> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.as_str()))
        .collect();
    if result.is_error == Some(true) {
        let mut text = texts.join(" ");
        if text.len() > MAX_ERROR_BYTES {
            let mut end = MAX_ERROR_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("...");
        }
        return Err(RunError::Failed(format!(
            "`{name}` reported an error: {text}"
        )));
    }
    let text = match (&result.structured_content, texts.as_slice()) {
        (Some(structured), _) => structured.to_string(),
        (None, [one]) if serde_json::from_str::<serde::de::IgnoredAny>(one).is_ok() => {
            (*one).to_owned()
        }
        (None, texts) if texts.len() == result.content.len() => {
            serde_json::Value::from(texts.join("\n")).to_string()
        }
        (None, _) => serde_json::to_string(&result.content).map_err(|error| {
            RunError::Output(format!(
                "`{name}` gave content that does not serialize: {error}"
            ))
        })?,
    };
    if text.len() > max_output {
        return Err(RunError::Output(format!(
            "`{name}` gave {} bytes, more than the {max_output} a call may give",
            text.len()
        )));
    }
    Ok(text)
}

/// The program of a stdio server, as for a command tool.
pub(crate) fn stdio_endpoint(command: &[String], file: &Path) -> Endpoint {
    let dir = file.parent().unwrap_or(Path::new(".")).to_owned();
    Endpoint::Stdio {
        program: crate::command::program_path(&command[0], &dir),
        args: command[1..].to_vec(),
        dir,
    }
}
