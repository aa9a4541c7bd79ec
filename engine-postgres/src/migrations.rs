//! The schema, as numbered migrations applied in order at start-up. Replicas that start
//! together take turns under one advisory lock, so each migration runs once; a database
//! migrated by a newer engine is refused rather than written with an older schema.

use tokio_postgres::NoTls;

use super::DatabaseError;

/// The advisory lock held while migrating (an arbitrary number, the same in every
/// engine).
const MIGRATION_LOCK: i64 = 0x656e_6769_6e65; // "engine"

/// What each version adds, in order. Never edit one that shipped: add the next.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "conversations and artifacts",
        "CREATE TABLE owners (
         conversation TEXT PRIMARY KEY,
         agent TEXT NOT NULL,
         subscriber TEXT NOT NULL
     );
     CREATE TABLE messages (
         conversation TEXT NOT NULL,
         seq INTEGER NOT NULL,
         body TEXT NOT NULL,
         PRIMARY KEY (conversation, seq)
     );
     CREATE TABLE turns (
         id BIGSERIAL PRIMARY KEY,
         conversation TEXT NOT NULL,
         ended_at TIMESTAMPTZ NOT NULL DEFAULT now(),
         stop TEXT NOT NULL,
         input_tokens BIGINT NOT NULL,
         output_tokens BIGINT NOT NULL,
         cost_usd DOUBLE PRECISION NOT NULL,
         model_requests INTEGER NOT NULL,
         replica TEXT NOT NULL
     );
     CREATE INDEX turns_by_conversation ON turns (conversation);
     -- The turn under way in a conversation, while its replica holds the conversation's
     -- lock: a row left here by a replica that stopped is a turn interrupted.
     CREATE TABLE running_turns (
         conversation TEXT PRIMARY KEY,
         turn TEXT NOT NULL,
         replica TEXT NOT NULL,
         started_at TIMESTAMPTZ NOT NULL DEFAULT now()
     );
     CREATE TABLE states (
         conversation TEXT PRIMARY KEY,
         body TEXT NOT NULL
     );
     CREATE TABLE actions (
         id BIGSERIAL PRIMARY KEY,
         conversation TEXT NOT NULL,
         turn TEXT NOT NULL,
         call_id TEXT NOT NULL,
         action TEXT NOT NULL,
         arguments TEXT NOT NULL,
         subscriber TEXT NOT NULL,
         state TEXT NOT NULL,
         detail TEXT,
         UNIQUE (turn, call_id)
     );
     CREATE INDEX actions_by_conversation ON actions (conversation);
     CREATE TABLE artifacts (
         handle TEXT PRIMARY KEY,
         conversation TEXT NOT NULL,
         filename TEXT NOT NULL,
         mime TEXT NOT NULL,
         bytes BYTEA NOT NULL,
         footprint BIGINT NOT NULL,
         expires_at TIMESTAMPTZ
     );
     CREATE INDEX artifacts_by_expiry ON artifacts (expires_at);",
    ),
    (
        2,
        "knowledge",
        // Words as the SQLite store's FTS5 tokenizer makes them: split at whatever is
        // not a letter or digit (PostgreSQL's parser would keep `refunds.md` or
        // `a-b` whole), folded to lower case (`simple`: no stemming, no stop words).
        "CREATE TABLE documents (
             id BIGSERIAL PRIMARY KEY,
             agent TEXT NOT NULL,
             filename TEXT NOT NULL,
             content TEXT NOT NULL,
             origin TEXT NOT NULL,
             words TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple',
                 regexp_replace(filename || ' ' || content, '[^[:alnum:]]+', ' ', 'g'))) STORED,
             UNIQUE (agent, filename)
         );
         CREATE INDEX documents_words ON documents USING GIN (words);",
    ),
    (
        3,
        "spend",
        // One row per model call of a tool or hook: its worst case while it runs, its
        // cost once settled (a replica that died mid-call leaves the worst case).
        "CREATE TABLE spend (
             id BIGSERIAL PRIMARY KEY,
             agent TEXT NOT NULL,
             at TIMESTAMPTZ NOT NULL DEFAULT now(),
             usd DOUBLE PRECISION NOT NULL,
             settled BOOLEAN NOT NULL DEFAULT false
         );
         CREATE INDEX spend_by_agent ON spend (agent, at);",
    ),
    (
        4,
        "action positions",
        // Where the answer of the call that staged an action is in its conversation:
        // call ids repeat across turns, a position does not.
        "ALTER TABLE actions ADD COLUMN position BIGINT;",
    ),
    (
        5,
        "knowledge origins",
        // Who wrote a document is a kind (`plugin`, `operator`) and a reference (the
        // plugin's namespace, the operator's name): every document so far was a
        // plugin's, and its `origin` held the namespace.
        "ALTER TABLE documents ADD COLUMN origin_ref TEXT NOT NULL DEFAULT '';
         UPDATE documents SET origin_ref = origin, origin = 'plugin';
         ALTER TABLE documents ALTER COLUMN origin_ref DROP DEFAULT;",
    ),
    (
        6,
        "oauth",
        // Sealed by the engine: the database holds bytes it cannot read.
        "CREATE TABLE oauth_grants (
             agent TEXT NOT NULL,
             subscriber TEXT NOT NULL,
             provider TEXT NOT NULL,
             sealed BYTEA NOT NULL,
             PRIMARY KEY (agent, subscriber, provider)
         );
         CREATE TABLE oauth_pending (
             id TEXT PRIMARY KEY,
             sealed BYTEA NOT NULL,
             expires_at BIGINT NOT NULL
         );
         CREATE INDEX oauth_pending_by_expiry ON oauth_pending (expires_at);",
    ),
    (
        7,
        "conversations by agent",
        // The admin panel lists an agent's conversations.
        "CREATE INDEX owners_by_agent ON owners (agent);",
    ),
    (
        8,
        "panel secrets",
        // What the admin panel sets, read by every replica (as the configuration file's
        // secrets are read: the database is to be guarded as the file is).
        "CREATE TABLE panel_secrets (
             agent TEXT NOT NULL,
             key TEXT NOT NULL,
             value TEXT NOT NULL,
             PRIMARY KEY (agent, key)
         );",
    ),
];

/// The newest version of the schema this engine knows.
pub const SCHEMA_VERSION: i32 = MIGRATIONS[MIGRATIONS.len() - 1].0;

/// Migrates the database `config` names, on a thread of its own (start-up is not async).
pub(super) fn apply(config: &tokio_postgres::Config) -> Result<(), DatabaseError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| DatabaseError::Unavailable(error.to_string()))?;
                runtime.block_on(migrate(config))
            })
            .join()
            .unwrap_or_else(|_| Err(DatabaseError::Failed("the migration panicked".into())))
    })
}

async fn migrate(config: &tokio_postgres::Config) -> Result<(), DatabaseError> {
    let (mut client, connection) = config.connect(NoTls).await?;
    let connection = tokio::spawn(connection);
    // Held until this session ends: a replica that dies mid-migration lets the next go.
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS engine_migrations (
                 version INTEGER PRIMARY KEY,
                 name TEXT NOT NULL,
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
             )",
        )
        .await?;
    let applied: i32 = client
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM engine_migrations",
            &[],
        )
        .await?
        .get(0);
    if applied > SCHEMA_VERSION {
        return Err(DatabaseError::Failed(format!(
            "the database's schema is at version {applied}, newer than this engine's {SCHEMA_VERSION}: run the newer engine, or a database of this version"
        )));
    }
    for (version, name, sql) in MIGRATIONS.iter().filter(|(version, ..)| *version > applied) {
        let transaction = client.transaction().await?;
        transaction.batch_execute(sql).await?;
        transaction
            .execute(
                "INSERT INTO engine_migrations (version, name) VALUES ($1, $2)",
                &[version, name],
            )
            .await?;
        transaction.commit().await?;
        tracing::info!(version, name, "the database was migrated");
    }
    drop(client);
    let _ = connection.await;
    Ok(())
}
