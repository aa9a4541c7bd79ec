//! One turn per conversation across every process that opens one SQLite store (`engine
//! serve` and `engine turn` on one data directory, or two servers): the conversation's
//! row in `running_turns` names the store that holds it, and a holder is alive while its
//! process holds the lock on its own file beside the database. The operating system
//! lets go of that lock when the process dies, however it dies, so a turn a dead process
//! left is taken over (and the actions it left `performing` are marked `unknown`), while
//! a live process's turn is never taken, nor its performs marked.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use engine_core::stores::{ConversationError, INTERRUPTED};

/// This opening of the store, as other processes see it: a token, and the locked file
/// that says it is alive.
pub(super) struct Holder {
    dir: PathBuf,
    token: String,
    /// Locked while this lives; the lock goes with the process.
    _alive: File,
}

impl Holder {
    /// A holder for the store at `database`: its file in `<database>.turns/`, created and
    /// locked. Files dead holders left there are removed.
    pub(super) fn new(database: &Path) -> Result<Self, ConversationError> {
        let mut dir = database.as_os_str().to_owned();
        dir.push(".turns");
        let dir = PathBuf::from(dir);
        let failed = |error: std::io::Error| {
            ConversationError(format!(
                "the conversation store's turn locks in {} failed: {error}",
                dir.display()
            ))
        };
        std::fs::create_dir_all(&dir).map_err(failed)?;
        let mut random = [0u8; 12];
        getrandom::fill(&mut random).expect("the system's random source answers");
        let token: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
        // Locked under a name no other process reads, then renamed into place: a file
        // another process finds as `.alive` is locked already, never taken for a dead
        // holder's in the moment between its creation and its lock.
        let starting = dir.join(format!("{token}.new"));
        let alive = File::create(&starting).map_err(failed)?;
        alive.lock().map_err(failed)?;
        std::fs::rename(&starting, dir.join(format!("{token}.alive"))).map_err(failed)?;
        let holder = Self {
            dir,
            token,
            _alive: alive,
        };
        holder.remove_dead();
        Ok(holder)
    }

    /// Whether the store `holder` names is open in a live process (this one included).
    fn is_alive(&self, holder: &str) -> bool {
        if holder == self.token {
            return true;
        }
        let Some(path) = self.file_of(holder) else {
            return false;
        };
        match File::open(&path) {
            // Locked: its process is alive. Any other failure to lock is taken as alive
            // too: a turn wrongly refused can be sent again, one run twice cannot be undone.
            Ok(file) => match file.try_lock() {
                Ok(()) => false,
                Err(TryLockError::WouldBlock) => true,
                Err(TryLockError::Error(error)) => {
                    tracing::warn!(%error, file = %path.display(), "a turn lock could not be read: taken as held");
                    true
                }
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
            Err(error) => {
                tracing::warn!(%error, file = %path.display(), "a turn lock could not be read: taken as held");
                true
            }
        }
    }

    /// The file of `holder`, if the token is one this module made (nothing else is
    /// opened).
    fn file_of(&self, holder: &str) -> Option<PathBuf> {
        let token = holder.len() == 24 && holder.bytes().all(|byte| byte.is_ascii_hexdigit());
        token.then(|| self.dir.join(format!("{holder}.alive")))
    }

    /// Removes the files of holders whose process is gone.
    fn remove_dead(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(holder) = name.to_str().and_then(|name| name.strip_suffix(".alive")) else {
                continue;
            };
            if !self.is_alive(holder) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Takes `conversation` for a turn, within `transaction`: `false` while a live
    /// process's store holds it. One that a dead process held is taken over, and the
    /// actions that process left performing are marked unknown. This store's own hold
    /// is taken again: within a process, the engine keeps a conversation's turns apart.
    pub(super) fn begin(
        &self,
        transaction: &rusqlite::Transaction<'_>,
        conversation: &str,
    ) -> rusqlite::Result<bool> {
        use rusqlite::OptionalExtension as _;
        let held: Option<String> = transaction
            .query_row(
                "SELECT holder FROM running_turns WHERE conversation = ?1",
                [conversation],
                |row| row.get(0),
            )
            .optional()?;
        match held {
            Some(holder) if self.is_alive(&holder) && holder != self.token => return Ok(false),
            Some(holder) if holder != self.token => {
                let interrupted = transaction.execute(
                    "UPDATE actions SET state = 'unknown', detail = ?2
                     WHERE conversation = ?1 AND state = 'performing'",
                    [conversation, INTERRUPTED],
                )?;
                if interrupted > 0 {
                    tracing::warn!(
                        conversation,
                        actions = interrupted,
                        "staged actions were running when the process that ran them stopped: marked unknown, not run again"
                    );
                }
            }
            _ => {}
        }
        transaction.execute(
            "INSERT INTO running_turns (conversation, holder) VALUES (?1, ?2)
             ON CONFLICT (conversation) DO UPDATE SET holder = excluded.holder",
            [conversation, &self.token],
        )?;
        Ok(true)
    }

    /// Lets go of `conversation`, if this store holds it.
    pub(super) fn end(
        &self,
        connection: &rusqlite::Connection,
        conversation: &str,
    ) -> rusqlite::Result<()> {
        connection.execute(
            "DELETE FROM running_turns WHERE conversation = ?1 AND holder = ?2",
            [conversation, &self.token],
        )?;
        Ok(())
    }

    /// The conversations a live process's turn holds now, other than this store's: their
    /// `performing` actions are under way, not left behind.
    pub(super) fn held_elsewhere(
        &self,
        connection: &rusqlite::Connection,
    ) -> rusqlite::Result<Vec<String>> {
        let mut statement = connection.prepare("SELECT conversation, holder FROM running_turns")?;
        let rows = statement.query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })?;
        let mut held = Vec::new();
        for row in rows {
            let (conversation, holder) = row?;
            if holder != self.token && self.is_alive(&holder) {
                held.push(conversation);
            }
        }
        Ok(held)
    }
}
