//! Dev tokens: per agent, with an expiry, issued and revoked by `engine dev-token`,
//! kept hashed in a file of the engine's data directory that only its user may read.
//!
//! A token is `dev_<id>_<secret>`: the id finds its record, and the record holds the
//! SHA-256 of the whole token, compared in constant time. The file is read at every
//! check, so that a token issued or revoked by the command counts at once.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::ids::random_hex;

/// The file's name, in the data directory.
pub const FILE_NAME: &str = "dev-tokens.json";

/// How long a record is kept after its token expired, for `engine dev-token list`.
const KEPT_AFTER_EXPIRY: u64 = 7 * 24 * 60 * 60;

/// The dev tokens of one engine: the file that keeps them.
#[derive(Clone, Debug)]
pub struct DevTokens {
    path: PathBuf,
}

/// One issued token, as the file keeps it: never the token itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRecord {
    /// Its id, the part of the token that is not secret.
    pub id: String,
    /// The agent it opens sessions for.
    pub agent: String,
    /// The SHA-256 of the whole token, in hex.
    pub sha256: String,
    /// When it was issued, in seconds since the Unix epoch.
    pub issued_at: u64,
    /// When it stops working, in seconds since the Unix epoch.
    pub expires_at: u64,
    /// Whether it was revoked.
    pub revoked: bool,
}

/// Why a token opens no session. Callers answer 401 whatever the reason, and log it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a token this engine issued, or not for this agent.
    Unknown,
    /// Revoked by `engine dev-token revoke`.
    Revoked,
    /// Past its expiry.
    Expired,
}

impl Refusal {
    /// In words, for the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "the token is not one this engine issued for the agent",
            Self::Revoked => "the token was revoked",
            Self::Expired => "the token has expired",
        }
    }
}

impl DevTokens {
    /// The tokens kept in `data_dir`.
    pub fn in_dir(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join(FILE_NAME),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every record, oldest first; none when the file does not exist.
    pub fn list(&self) -> io::Result<Vec<TokenRecord>> {
        match fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|error| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not a dev token file: {error}", self.path.display()),
                )
            }),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(error) => Err(error),
        }
    }

    /// Issues a token for `agent` that works for `ttl`: the token (shown once, never
    /// kept) and its record. Records that expired a week ago or more are dropped.
    pub fn issue(&self, agent: &str, ttl: Duration) -> io::Result<(String, TokenRecord)> {
        let _locked = self.lock()?;
        let now = now_secs();
        let mut records = self.list()?;
        records.retain(|record| record.expires_at.saturating_add(KEPT_AFTER_EXPIRY) > now);
        let id = loop {
            let id = random_hex(4);
            if records.iter().all(|record| record.id != id) {
                break id;
            }
        };
        let token = format!("dev_{id}_{}", random_hex(16));
        let record = TokenRecord {
            id,
            agent: agent.to_owned(),
            sha256: digest(&token),
            issued_at: now,
            expires_at: now.saturating_add(ttl.as_secs()),
            revoked: false,
        };
        records.push(record.clone());
        self.write(&records)?;
        Ok((token, record))
    }

    /// Revokes the token `id`: `false` when there is none.
    pub fn revoke(&self, id: &str) -> io::Result<bool> {
        let _locked = self.lock()?;
        let mut records = self.list()?;
        let Some(record) = records.iter_mut().find(|record| record.id == id) else {
            return Ok(false);
        };
        record.revoked = true;
        self.write(&records)?;
        Ok(true)
    }

    /// Whether `token` opens a session for `agent` now: the token's id, or why not.
    pub fn check(&self, agent: &str, token: &str) -> Result<String, Refusal> {
        let id = token
            .strip_prefix("dev_")
            .and_then(|rest| rest.split_once('_'))
            .map(|(id, _)| id)
            .ok_or(Refusal::Unknown)?;
        let records = self.list().map_err(|error| {
            tracing::error!(%error, "the dev tokens could not be read");
            Refusal::Unknown
        })?;
        let record = records
            .iter()
            .find(|record| record.id == id && record.agent == agent)
            .ok_or(Refusal::Unknown)?;
        let matches: bool = digest(token)
            .as_bytes()
            .ct_eq(record.sha256.as_bytes())
            .into();
        if !matches {
            return Err(Refusal::Unknown);
        }
        if record.revoked {
            return Err(Refusal::Revoked);
        }
        if now_secs() >= record.expires_at {
            return Err(Refusal::Expired);
        }
        Ok(record.id.clone())
    }

    /// Held while the file is read and written again, so that an issue and a revoke in
    /// two processes never lose one another's change.
    fn lock(&self) -> io::Result<fs::File> {
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir)?;
        }
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.path.with_extension("lock"))?;
        file.lock()?;
        Ok(file)
    }

    /// Writes `records` whole: to a file beside it, readable by this user only, then
    /// renamed over it, so that a reader never sees half of it.
    fn write(&self, records: &[TokenRecord]) -> io::Result<()> {
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir)?;
        }
        let temporary = self
            .path
            .with_extension(format!("json.{}", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temporary)?;
        let text = serde_json::to_vec_pretty(records).expect("records always serialize");
        file.write_all(&text)?;
        file.sync_all()?;
        fs::rename(&temporary, &self.path)
    }
}

fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens in a scratch directory, removed when dropped.
    struct Scratch(DevTokens);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(self.0.path.parent().unwrap());
        }
    }

    impl std::ops::Deref for Scratch {
        type Target = DevTokens;

        fn deref(&self) -> &DevTokens {
            &self.0
        }
    }

    fn tokens() -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "engine-dev-tokens-{}-{}",
            std::process::id(),
            random_hex(4)
        ));
        Scratch(DevTokens::in_dir(&dir))
    }

    #[test]
    fn a_token_opens_sessions_for_its_agent_only_until_revoked() {
        let tokens = tokens();
        let (token, record) = tokens.issue("bot", Duration::from_secs(60)).unwrap();
        assert_eq!(tokens.check("bot", &token), Ok(record.id.clone()));
        assert_eq!(tokens.check("other", &token), Err(Refusal::Unknown));
        let mut wrong = token.clone();
        wrong.pop();
        wrong.push(if token.ends_with('0') { '1' } else { '0' });
        assert_eq!(tokens.check("bot", &wrong), Err(Refusal::Unknown));
        assert!(tokens.revoke(&record.id).unwrap());
        assert_eq!(tokens.check("bot", &token), Err(Refusal::Revoked));
        let kept = fs::read_to_string(tokens.path()).unwrap();
        assert!(!kept.contains(&token), "the file keeps only a hash");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(tokens.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "only the engine's user reads the file");
        }
    }

    #[test]
    fn an_expired_token_is_refused() {
        let tokens = tokens();
        let (token, _) = tokens.issue("bot", Duration::ZERO).unwrap();
        assert_eq!(tokens.check("bot", &token), Err(Refusal::Expired));
    }
}
