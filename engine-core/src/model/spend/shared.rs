//! The spend windows several replicas count together: the [`SpendLedger`] a shared
//! database implements, an agent's [`SharedWindow`] in it, and a call's reservation there.

use std::sync::Arc;

use plugin_sdk::engine::BoxFuture;
use plugin_sdk::model::{ModelError, SpendCap};

use crate::BackendError;

/// A ledger of what agents spent that several replicas of an engine share: what a shared
/// database backend implements (`engine-postgres`).
pub trait SpendLedger: Send + Sync {
    /// Reserves `usd` on `window` if its cap has room beside what every replica charged
    /// and reserved within it.
    fn reserve<'a>(
        &'a self,
        window: &'a SharedWindow,
        usd: f64,
    ) -> BoxFuture<'a, Result<WindowReservation, BackendError>>;

    /// Charges `usd` for the reservation `id` instead of what it reserved.
    fn settle(&self, id: i64, usd: f64) -> BoxFuture<'_, Result<(), BackendError>>;
}

/// What a [`SpendLedger`] answers a reservation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WindowReservation {
    /// Reserved, under this id (for [`SpendLedger::settle`]).
    Reserved {
        /// The reservation's id.
        id: i64,
    },
    /// Refused: the window has no room for it.
    Refused {
        /// What the window holds, charged and reserved, in US dollars.
        spent_usd: f64,
    },
}

/// An agent's spend window in a [`SpendLedger`].
#[derive(Clone)]
pub struct SharedWindow {
    pub(crate) ledger: Arc<dyn SpendLedger>,
    /// The agent's name.
    pub agent: String,
    /// Its cap, in US dollars.
    pub cap_usd: f64,
    /// Its length, in seconds.
    pub secs: u64,
}

impl std::fmt::Debug for SharedWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedWindow")
            .field("agent", &self.agent)
            .field("cap_usd", &self.cap_usd)
            .field("secs", &self.secs)
            .finish_non_exhaustive()
    }
}

impl SharedWindow {
    /// The window of `agent` in `ledger`: at most `cap_usd` within any `secs` seconds.
    pub fn new(
        ledger: Arc<dyn SpendLedger>,
        agent: impl Into<String>,
        cap_usd: f64,
        secs: u64,
    ) -> Self {
        Self {
            ledger,
            agent: agent.into(),
            cap_usd,
            secs,
        }
    }

    /// Reserves `usd` across replicas, or says the window has no room. A ledger that
    /// cannot be asked refuses the call: a cap that cannot be checked is not passed.
    pub(crate) async fn reserve(&self, usd: f64) -> Result<SharedReservation, ModelError> {
        match self.ledger.reserve(self, usd).await {
            Ok(WindowReservation::Reserved { id }) => Ok(SharedReservation {
                ledger: Arc::clone(&self.ledger),
                id,
            }),
            Ok(WindowReservation::Refused { spent_usd }) => Err(ModelError::SpendCapReached {
                cap: SpendCap::Window { secs: self.secs },
                cap_usd: self.cap_usd,
                spent_usd,
                call_usd: usd,
            }),
            Err(error) => Err(ModelError::Gateway(format!(
                "the agent's spend could not be counted, so no model call is made: {error}"
            ))),
        }
    }
}

/// A call's worst case, reserved in the shared ledger. Dropped unsettled, it stays
/// charged the worst case, as a local reservation does.
pub(crate) struct SharedReservation {
    ledger: Arc<dyn SpendLedger>,
    id: i64,
}

impl SharedReservation {
    /// Charges `usd` instead of the worst case; a ledger that cannot be reached keeps the
    /// worst case (logged): too much, never too little.
    pub(crate) async fn settle(self, usd: f64) {
        if let Err(error) = self.ledger.settle(self.id, usd).await {
            tracing::warn!(target: "model", %error, "a model call's cost could not be settled in the shared ledger: it stays charged its worst case");
        }
    }
}
