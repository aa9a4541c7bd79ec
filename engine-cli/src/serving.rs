//! `mcp` and `serve`: the agent served over stdio or HTTP, with the external tools watched
//! and the configuration reloaded on SIGHUP while it serves.

use std::future::Future;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use engine_core::{CancellationToken, Engine};
use engine_mcp::McpServer;

use crate::reload;

/// External tools, read once at start-up for every command (drop-in providers are read
/// before the engine is built). The tools' connections (MCP servers) and the watch of
/// both directories run on a runtime of their own, with one
/// worker: it outlives each command's runtime, and a busy server never takes a worker
/// from serving.
pub(crate) struct External {
    runtime: tokio::runtime::Runtime,
    loader: engine_extensions::Loader,
}

impl External {
    pub(crate) fn load(engine: &Engine, loader: engine_extensions::Loader) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("extensions")
            .enable_all()
            .build()
            .expect("a runtime starts");
        engine.install_extensions(runtime.block_on(loader.load(engine)));
        Self { runtime, loader }
    }

    /// Watches the tools' and providers' directories while the engine serves (the
    /// runtime stays with the watch); a watch that cannot start is logged, and what was
    /// read at start-up stays.
    pub(crate) fn watch(
        self,
        engine: &Arc<Engine>,
    ) -> (Option<engine_extensions::Watching>, tokio::runtime::Runtime) {
        let watching = {
            let _entered = self.runtime.enter();
            engine_extensions::watch(Arc::clone(engine), self.loader)
                .inspect_err(|error| {
                    tracing::error!("external tools and drop-in providers will not reload: {error}")
                })
                .ok()
        };
        (watching, self.runtime)
    }
}

/// Runs `server`, and beside it the engine's reload on SIGHUP from the configuration
/// file it was read from, when it was read from one.
pub(crate) fn serve<E: std::fmt::Display>(
    server: impl Future<Output = Result<(), E>>,
    reloading: Option<(Arc<reload::ConfigSource>, Arc<Engine>)>,
) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime starts");
    if let Some((source, engine)) = reloading {
        let _entered = runtime.enter();
        if let Some(following) = Arc::clone(&source).follow_shared_secrets(Arc::clone(&engine)) {
            runtime.spawn(following);
        }
        if let Some(reloading) = source.reload_on_hangup(engine) {
            runtime.spawn(reloading);
        }
    }
    match runtime.block_on(server) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("the MCP server stopped: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The MCP server's token, from [`engine_server::TOKEN_ENV`], removed from the environment
/// like secrets so that no plugin or child process reads it.
///
/// # Safety
///
/// As [`take_environment`](engine_core::config::take_environment): no other thread may
/// exist yet.
pub(crate) unsafe fn take_token() -> Result<Option<String>, String> {
    let Some(value) = std::env::var_os(engine_server::TOKEN_ENV) else {
        return Ok(None);
    };
    std::env::remove_var(engine_server::TOKEN_ENV);
    value
        .into_string()
        .map(Some)
        .map_err(|_| format!("{} is not UTF-8 text", engine_server::TOKEN_ENV))
}

/// Binds `addr`, prints the URL on stdout (the one line a script needs to find a port
/// chosen by the system), and serves until Ctrl-C or `SIGTERM` (what a service manager
/// or an orchestrator sends to stop a replica): turns under way are then cancelled, so
/// each answers its open calls and is stored as cancelled, rather than left interrupted.
pub(crate) async fn serve_http(
    server: McpServer,
    addr: SocketAddr,
    options: engine_server::HttpOptions,
) -> Result<(), engine_server::HttpError> {
    use tokio::signal::unix::{signal, SignalKind};
    let listener = tokio::net::TcpListener::bind(addr).await?;
    options.check(listener.local_addr()?)?;
    // Listening before the URL is printed: a signal sent once a script sees it stops the
    // server as it should. Without a handler the server runs until killed, which is
    // fine too.
    let listening = |kind| {
        signal(kind)
            .inspect_err(|error| tracing::error!("a stop signal will not be heard: {error}"))
            .ok()
    };
    let (mut interrupt, mut terminate) = (
        listening(SignalKind::interrupt()),
        listening(SignalKind::terminate()),
    );
    println!("http://{}/mcp", listener.local_addr()?);
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            async fn heard(signal: Option<&mut tokio::signal::unix::Signal>) {
                match signal {
                    Some(signal) => drop(signal.recv().await),
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                () = heard(interrupt.as_mut()) => {}
                () = heard(terminate.as_mut()) => {}
            }
            shutdown.cancel();
        }
    });
    engine_server::serve(server, listener, options, shutdown).await
}
