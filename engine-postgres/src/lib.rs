//! The stores on one PostgreSQL, shared by every replica of an engine: conversations
//! (messages, turns, state, staged actions), artifacts, the knowledge base, what agents'
//! tools spent on model calls, and the OAuth broker's sealed grants.
//!
//! Each operation takes a pooled connection and is bounded by the configured timeout
//! (the server is told the same bound, so it stops the statement too). A connection
//! that broke is dropped when taken back, so a database that went away serves again
//! once it is back, without a restart. The schema is versioned and migrated at start-up
//! under an advisory lock, so replicas starting at once migrate once
//! (the schema's version is [`SCHEMA_VERSION`]). Every advisory lock's key is the hash
//! of a text that starts with its store's name (`conversation:`, `spend:`,
//! `knowledge:`), so no conversation id can hold an agent's ledger or knowledge.

mod artifacts;
mod conversation_store;
mod conversations;
mod grants;
/// Several replicas on one PostgreSQL, for the people who run them.
#[doc = include_str!("../docs/replicas.md")]
pub mod guide {}
mod knowledge;
mod migrations;
mod panel_secrets;
mod spend;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use engine_core::config::{ArtifactLimits, DatabaseConfig, KnowledgeLimits};
use engine_core::stores::{Conversations, PanelSecretStore};
use engine_core::{BackendError, Backends, SharedStores};

pub use artifacts::PostgresArtifacts;
pub use conversation_store::PostgresConversations;
pub(crate) use conversations::{TurnEnded, TurnLock};
pub use grants::PostgresGrants;
pub use knowledge::PostgresKnowledge;
pub use migrations::SCHEMA_VERSION;
pub use panel_secrets::PostgresPanelSecrets;

/// `backends` with every store on the database `[database]` names, and the admin panel's
/// secrets there.
pub fn backends(backends: Backends) -> Backends {
    backends
        .with_shared(open_shared)
        .with_panel_secrets(open_panel_secrets)
}

/// The admin panel's secrets in the database `described` names (connecting migrates it).
/// Read before the engine's stores are opened, so on a connection of its own: one at
/// most, beside the `max_connections` of the stores (its reads are a row every 3 s).
pub fn open_panel_secrets(
    described: &DatabaseConfig,
) -> Result<Arc<dyn PanelSecretStore>, BackendError> {
    let one = DatabaseConfig {
        max_connections: 1,
        ..described.clone()
    };
    let database = Arc::new(Postgres::connect(&one).map_err(BackendError::new)?);
    Ok(Arc::new(PostgresPanelSecrets::new(database)))
}

/// The stores replicas share, in the database `described` names. Connecting migrates
/// the database.
pub fn open_shared(
    described: &DatabaseConfig,
    artifacts: ArtifactLimits,
    knowledge: KnowledgeLimits,
) -> Result<SharedStores, BackendError> {
    let database = Arc::new(Postgres::connect(described).map_err(BackendError::new)?);
    tracing::info!(
        replica = database.replica(),
        "connected to the shared database"
    );
    Ok(SharedStores {
        artifacts: Arc::new(PostgresArtifacts::new(Arc::clone(&database), artifacts)),
        knowledge: Arc::new(PostgresKnowledge::new(Arc::clone(&database), knowledge)),
        spend: Arc::clone(&database) as _,
        grants: Arc::new(PostgresGrants::new(Arc::clone(&database))),
        conversations: Conversations::new(PostgresConversations::new(database)),
    })
}

/// How long a connection may be silent before keepalives probe it, how often they
/// probe, and how many unanswered probes end it.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;

/// The most a replica starting waits for a lock while migrating (another replica's
/// migration, or a table it alters).
const MIGRATION_LOCK_TIMEOUT_MS: u64 = 60_000;

/// Why a database operation failed.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// No connection could be had: the server is down, unreachable, refuses this
    /// replica's login, or every connection is in use for longer than the bound.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// The operation took longer than its bound.
    #[error("the database did not answer within {0} ms")]
    TimedOut(u128),
    /// The database answered with an error.
    #[error("the database failed: {0}")]
    Failed(String),
}

impl From<tokio_postgres::Error> for DatabaseError {
    fn from(error: tokio_postgres::Error) -> Self {
        // A closed connection is the database going away, not a refused statement.
        if error.is_closed() {
            return Self::Unavailable(error.to_string());
        }
        match error.as_db_error() {
            // The server's statement bound, which is the engine's: the same error as when
            // the engine gives up first ([`Postgres::bounded`] gives the bound).
            Some(db) if *db.code() == tokio_postgres::error::SqlState::QUERY_CANCELED => {
                Self::TimedOut(0)
            }
            Some(db) => Self::Failed(db.message().to_owned()),
            None => Self::Unavailable(with_causes(&error)),
        }
    }
}

/// `error` and what caused it, in one line ("invalid configuration: password missing").
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(source) = cause {
        let more = source.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = source.source();
    }
    text
}

/// The shared database: two pools of connections, and this replica's name (recorded
/// with the turns it runs).
pub struct Postgres {
    /// For store operations, each holding a connection only while it runs.
    pool: Pool,
    /// For turns' conversation locks, each held for a whole turn. A pool of their own:
    /// turns holding every connection of a shared pool would each wait for one more to
    /// load or append, and none would get it.
    locks: Pool,
    /// Whether this replica's sweep of what stopped replicas left runs, and how often.
    sweeping: std::sync::atomic::AtomicBool,
    sweep_every: Duration,
    timeout: Duration,
    replica: String,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

impl Postgres {
    /// Connects to the database `config` names, with the password from the environment
    /// variable it names, and migrates it to this engine's schema (once, whichever
    /// replica gets there first). Blocks until then: it runs at start-up.
    pub fn connect(config: &DatabaseConfig) -> Result<Self, DatabaseError> {
        let mut postgres: tokio_postgres::Config = config
            .url
            .parse()
            .map_err(|error| DatabaseError::Unavailable(format!("`database.url`: {error}")))?;
        if let Ok(password) = std::env::var(&config.password_env) {
            postgres.password(password);
        }
        postgres
            .application_name("engine")
            .connect_timeout(config.timeout())
            // A peer that went silent (a host lost, a network cut) is found in about half
            // a minute instead of TCP's hours: on this side by keepalives and the bound
            // on unacknowledged data, on the server's by its own keepalives, so a dead
            // replica's conversation locks are let go.
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_RETRIES)
            .tcp_user_timeout(KEEPALIVE_IDLE + KEEPALIVE_INTERVAL * KEEPALIVE_RETRIES);
        let server_keepalives = format!(
            "-c tcp_keepalives_idle={} -c tcp_keepalives_interval={} -c tcp_keepalives_count={KEEPALIVE_RETRIES}",
            KEEPALIVE_IDLE.as_secs(),
            KEEPALIVE_INTERVAL.as_secs(),
        );
        // Options the URL gives (`?options=...`) are kept, with the engine's after them.
        let given = postgres.get_options().map(str::to_owned);
        let with_given = |ours: String| match &given {
            Some(given) => format!("{given} {ours}"),
            None => ours,
        };
        // Migrating waits for another replica's migration, and may take long itself: no
        // statement bound there, and a minute at most for a lock.
        postgres.options(with_given(format!(
            "{server_keepalives} -c lock_timeout={MIGRATION_LOCK_TIMEOUT_MS}"
        )));
        migrations::apply(&postgres)?;
        // Elsewhere the server gives up a statement when the engine does.
        postgres.options(with_given(format!(
            "{server_keepalives} -c statement_timeout={}",
            config.timeout_ms
        )));
        let pool = |postgres: tokio_postgres::Config| {
            let manager = Manager::from_config(
                postgres,
                NoTls,
                ManagerConfig {
                    recycling_method: RecyclingMethod::Fast,
                },
            );
            Pool::builder(manager)
                .max_size(config.max_connections)
                .runtime(Runtime::Tokio1)
                .wait_timeout(Some(config.timeout()))
                .create_timeout(Some(config.timeout()))
                .recycle_timeout(Some(config.timeout()))
                .build()
                .map_err(|error| DatabaseError::Unavailable(error.to_string()))
        };
        Ok(Self {
            locks: pool(postgres.clone())?,
            pool: pool(postgres)?,
            sweeping: Default::default(),
            // At least a second between sweeps, whatever a configuration built by hand says.
            sweep_every: Duration::from_secs(config.sweep_secs.max(1)),
            timeout: config.timeout(),
            replica: replica_name(),
        })
    }

    /// This replica's name: its host, process and a random part.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// A pooled connection.
    async fn connection(&self) -> Result<Object, DatabaseError> {
        self.pool
            .get()
            .await
            .map_err(|error| DatabaseError::Unavailable(with_causes(&error)))
    }

    /// Starts this replica's sweep, once: every `sweep_secs`, the turns stopped
    /// replicas left running in conversations nobody came back to are recorded
    /// interrupted and their actions unknown. It runs on the caller's runtime for as long
    /// as the database is in use, and ends once it is dropped (it holds it weakly).
    pub(crate) fn sweep_in_background(self: &Arc<Self>) {
        if self
            .sweeping
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        let (database, every) = (Arc::downgrade(self), self.sweep_every);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(database) = database.upgrade() else {
                    return;
                };
                database.sweep().await;
            }
        });
    }

    /// A connection to hold a conversation's lock on, for a turn.
    async fn lock_connection(&self) -> Result<Object, DatabaseError> {
        self.locks
            .get()
            .await
            .map_err(|error| DatabaseError::Unavailable(with_causes(&error)))
    }

    /// Runs `work`, giving up after the configured bound.
    async fn bounded<T>(
        &self,
        work: impl Future<Output = Result<T, DatabaseError>>,
    ) -> Result<T, DatabaseError> {
        let bound = self.timeout.as_millis();
        tokio::time::timeout(self.timeout, work)
            .await
            .unwrap_or(Err(DatabaseError::TimedOut(bound)))
            .map_err(|error| match error {
                DatabaseError::TimedOut(_) => DatabaseError::TimedOut(bound),
                other => other,
            })
    }
}

/// `host-pid-random`: unique among the replicas, and telling an operator where a turn
/// ran.
fn replica_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_default();
    let mut random = [0u8; 4];
    getrandom::fill(&mut random).expect("the system's random source works");
    let random: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{host}-{}-{random}", std::process::id())
}
