//! What a backend (a database, a remote service) failed with, in the backend's words: the
//! kernel reports it and never matches on it, so one type serves every backend.

use std::error::Error;

/// A backend's failure, as the backend described it.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct BackendError(Box<dyn Error + Send + Sync>);

impl BackendError {
    /// Wraps a backend's error (or its message).
    pub fn new(error: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        Self(error.into())
    }
}
