//! The store's schema, as numbered migrations (`migrations/NNN_*.sql`) applied in order,
//! each once, in a transaction; `PRAGMA user_version` records how far a file is.

use rusqlite::{Connection, TransactionBehavior};

/// Every migration, in order: the file's schema version is the number applied.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_documents.sql"),
    include_str!("migrations/002_owner_and_autoincrement.sql"),
    include_str!("migrations/003_origin_ref.sql"),
];

/// Brings the database up to the newest schema.
pub(super) fn migrate(connection: &mut Connection) -> rusqlite::Result<()> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: usize = transaction.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(version) {
        transaction.execute_batch(migration)?;
        transaction.pragma_update(None, "user_version", index + 1)?;
    }
    transaction.commit()
}
