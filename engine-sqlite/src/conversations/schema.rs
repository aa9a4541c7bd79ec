//! The conversations' tables, created if missing and brought up to date.

use super::sql;
use engine_core::stores::ConversationError;

/// Creates what is missing of the tables in `connection`'s database, and adds the
/// columns a store made by an earlier version lacks.
pub(super) fn create(connection: &rusqlite::Connection) -> Result<(), ConversationError> {
    connection
        .execute_batch(
            "CREATE TABLE IF NOT EXISTS messages (
                     conversation TEXT NOT NULL,
                     seq INTEGER NOT NULL,
                     body TEXT NOT NULL,
                     PRIMARY KEY (conversation, seq)
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS turns (
                     conversation TEXT NOT NULL,
                     ended_at INTEGER NOT NULL,
                     stop TEXT NOT NULL,
                     input_tokens INTEGER NOT NULL,
                     output_tokens INTEGER NOT NULL,
                     cost_usd REAL NOT NULL,
                     model_requests INTEGER NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS turns_by_conversation ON turns (conversation);
                 CREATE TABLE IF NOT EXISTS owners (
                     conversation TEXT PRIMARY KEY,
                     agent TEXT NOT NULL,
                     subscriber TEXT NOT NULL
                 ) WITHOUT ROWID;
                 CREATE INDEX IF NOT EXISTS owners_by_agent ON owners (agent);
                 CREATE TABLE IF NOT EXISTS states (
                     conversation TEXT PRIMARY KEY,
                     body TEXT NOT NULL
                 ) WITHOUT ROWID;
                 CREATE TABLE IF NOT EXISTS actions (
                     id INTEGER PRIMARY KEY,
                     conversation TEXT NOT NULL,
                     call_id TEXT NOT NULL,
                     action TEXT NOT NULL,
                     arguments TEXT NOT NULL,
                     subscriber TEXT NOT NULL,
                     state TEXT NOT NULL,
                     detail TEXT,
                     position INTEGER
                 );
                 CREATE INDEX IF NOT EXISTS actions_by_conversation ON actions (conversation);
                 CREATE TABLE IF NOT EXISTS running_turns (
                     conversation TEXT PRIMARY KEY,
                     holder TEXT NOT NULL
                 ) WITHOUT ROWID;",
        )
        .map_err(sql)?;
    // A store made before records had positions gains the column; its records keep none.
    let has_position = connection
        .prepare("SELECT 1 FROM pragma_table_info('actions') WHERE name = 'position'")
        .and_then(|mut statement| statement.exists([]))
        .map_err(sql)?;
    if !has_position {
        // Another process opening the same old file may add it first.
        if let Err(error) =
            connection.execute_batch("ALTER TABLE actions ADD COLUMN position INTEGER")
        {
            if !error.to_string().contains("duplicate column") {
                return Err(sql(error));
            }
        }
    }
    Ok(())
}
