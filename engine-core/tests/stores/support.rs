//! The three backends the suite runs on, each fresh for its test, and a TCP relay that
//! stands between a replica and PostgreSQL, to take the database away and bring it back.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_core::config::{ArtifactLimits, DatabaseConfig, KnowledgeLimits};
use engine_core::model::{MemorySpendLedger, SpendLedger};
use engine_core::stores::{Conversations, MemoryArtifacts, MemoryKnowledge};
use engine_postgres::{Postgres, PostgresArtifacts, PostgresConversations, PostgresKnowledge};
use engine_sqlite::SqliteKnowledge;
use plugin_sdk::engine::{ArtifactStore, KnowledgeStore};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One replica's stores.
pub struct Stores {
    pub conversations: Conversations,
    pub artifacts: Arc<dyn ArtifactStore>,
    pub knowledge: Option<Arc<dyn KnowledgeStore>>,
    /// None on SQLite, which keeps no ledger: one engine counts its own windows.
    pub spend: Option<Arc<dyn SpendLedger>>,
}

/// The knowledge limits of every store in the suite: few documents, to reach the cap.
pub fn knowledge_limits() -> KnowledgeLimits {
    KnowledgeLimits {
        max_documents: 3,
        max_search_words: 4,
        ..KnowledgeLimits::default()
    }
}

/// A name no other test process has used: the pid alone is not enough, since pids wrap
/// (at 32,768 here) and one CI run starts more processes than that, while the
/// directories and databases of earlier tests stay behind. The clock tells apart two
/// processes given one pid.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!(
        "{prefix}_{}_{clock}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Every store in memory: conversations, artifacts, knowledge and the spend ledger.
pub fn memory() -> Stores {
    Stores {
        conversations: Conversations::memory(),
        artifacts: Arc::new(MemoryArtifacts::new(ArtifactLimits::default())),
        knowledge: Some(Arc::new(MemoryKnowledge::new(knowledge_limits()))),
        spend: Some(Arc::new(MemorySpendLedger::new())),
    }
}

/// SQLite in a directory of its own, artifacts in memory: the embedded default.
pub fn sqlite() -> Stores {
    let dir = std::env::temp_dir().join(unique("engine-stores"));
    Stores {
        conversations: engine_sqlite::open_conversations(&dir.join("conversations.sqlite"))
            .unwrap(),
        artifacts: Arc::new(MemoryArtifacts::new(ArtifactLimits::default())),
        knowledge: Some(Arc::new(
            SqliteKnowledge::open(&dir.join("knowledge.sqlite"), knowledge_limits()).unwrap(),
        )),
        spend: None,
    }
}

/// The server `scripts/test` started: its URL (without a password) and the password's
/// variable. The PostgreSQL half of the suite fails without one, rather than pass
/// having tested nothing.
fn server() -> String {
    std::env::var("PLUGIN_SDK_POSTGRES_URL").expect(
        "PLUGIN_SDK_POSTGRES_URL is not set: run `bash scripts/test`, which starts a throwaway PostgreSQL",
    )
}

const PASSWORD_ENV: &str = "PLUGIN_SDK_POSTGRES_PASSWORD";

/// A new, empty database on the test server: its configuration, for replicas to share.
pub async fn fresh_database() -> DatabaseConfig {
    let server = server();
    let name = unique("engine_test");
    let mut admin: tokio_postgres::Config = server.parse().unwrap();
    admin.password(std::env::var(PASSWORD_ENV).unwrap_or_default());
    let (client, connection) = admin.connect(tokio_postgres::NoTls).await.unwrap();
    let connection = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    drop(client);
    let _ = connection.await;
    let base = server.rsplit_once('/').unwrap().0;
    DatabaseConfig {
        url: format!("{base}/{name}"),
        password_env: PASSWORD_ENV.to_owned(),
        max_connections: 8,
        timeout_ms: 5000,
        sweep_secs: 30,
    }
}

/// A replica's stores on the database `config` names (connecting migrates it). Connects
/// on a blocking thread, as start-up does outside any runtime.
pub async fn replica(config: &DatabaseConfig) -> Stores {
    let database = connect(config).await;
    Stores {
        artifacts: Arc::new(PostgresArtifacts::new(
            Arc::clone(&database),
            ArtifactLimits::default(),
        )),
        knowledge: Some(Arc::new(PostgresKnowledge::new(
            Arc::clone(&database),
            knowledge_limits(),
        ))),
        spend: Some(Arc::clone(&database) as Arc<dyn SpendLedger>),
        conversations: Conversations::new(PostgresConversations::new(database)),
    }
}

/// The database `config` names, connected (which migrates it) on a blocking thread, as
/// start-up does outside any runtime.
pub async fn connect(config: &DatabaseConfig) -> Arc<Postgres> {
    let config = config.clone();
    let database = tokio::task::spawn_blocking(move || Postgres::connect(&config))
        .await
        .unwrap()
        .unwrap();
    Arc::new(database)
}

/// A fresh database, and one replica on it.
pub async fn postgres() -> Stores {
    replica(&fresh_database().await).await
}

/// A session of our own on `config`'s database, for what a test does beside the stores
/// (holding a lock, ending another session).
pub async fn session(config: &DatabaseConfig) -> tokio_postgres::Client {
    let mut pg: tokio_postgres::Config = config.url.parse().unwrap();
    pg.password(std::env::var(PASSWORD_ENV).unwrap_or_default());
    let (client, connection) = pg.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// A TCP relay to the test server on a port of its own: [`down`](Self::down) closes it
/// and every connection through it (the database went away), [`up`](Self::up) listens
/// again on the same port.
pub struct Relay {
    port: u16,
    target: String,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Relay {
    pub async fn start() -> Self {
        let target = server();
        let authority = target.split('@').nth(1).unwrap().split('/').next().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let relay = Self {
            port: listener.local_addr().unwrap().port(),
            target: authority.to_owned(),
            tasks: Arc::default(),
        };
        relay.serve(listener);
        relay
    }

    /// `config` with its host and port replaced by the relay's.
    pub fn through(&self, config: &DatabaseConfig) -> DatabaseConfig {
        let database = config.url.rsplit_once('/').unwrap().1;
        DatabaseConfig {
            url: format!("postgres://engine@127.0.0.1:{}/{database}", self.port),
            ..config.clone()
        }
    }

    fn serve(&self, listener: TcpListener) {
        let tasks = Arc::clone(&self.tasks);
        let target = self.target.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let target = target.clone();
                let pipe = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                tasks.lock().unwrap().push(pipe);
            }
        });
        self.tasks.lock().unwrap().push(accept);
    }

    /// The database is gone: nothing listens, and every connection is cut.
    pub fn down(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }

    /// The database is back, at the same address.
    pub async fn up(&self) {
        // The aborted listener's socket closes as its task is dropped: retry briefly.
        for _ in 0..50 {
            if let Ok(listener) = TcpListener::bind(("127.0.0.1", self.port)).await {
                self.serve(listener);
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the relay's port {} could not be bound again", self.port);
    }
}
