//! [`MemorySpendLedger`]: a [`SpendLedger`] held in the process, for one engine or several
//! in one process (a test of replicas, an embedded host) and for the store suite.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use plugin_sdk::engine::BoxFuture;
use tokio::time::Instant;

use super::shared::{SharedWindow, SpendLedger, WindowReservation};
use crate::config::MAX_SPEND_WINDOW_SECS;
use crate::BackendError;

/// What agents spent, in memory: each reservation a charge with its time, checked and
/// made under one lock, so that engines sharing the ledger never pass a window's cap
/// together. A charge older than the longest window a configuration may give is dropped
/// at the next reservation, whoever's it was.
#[derive(Default)]
pub struct MemorySpendLedger {
    charges: Mutex<Charges>,
}

#[derive(Default)]
struct Charges {
    next_id: i64,
    by_id: BTreeMap<i64, Charge>,
}

struct Charge {
    agent: String,
    at: Instant,
    usd: f64,
}

impl MemorySpendLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SpendLedger for MemorySpendLedger {
    fn reserve<'a>(
        &'a self,
        window: &'a SharedWindow,
        usd: f64,
    ) -> BoxFuture<'a, Result<WindowReservation, BackendError>> {
        Box::pin(async move {
            let now = Instant::now();
            let within = |secs: u64| {
                let since = now.checked_sub(Duration::from_secs(secs));
                move |charge: &Charge| since.is_none_or(|since| charge.at > since)
            };
            let mut charges = self
                .charges
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // Older than the longest window is counted by none: every agent's goes.
            charges
                .by_id
                .retain(|_, charge| within(MAX_SPEND_WINDOW_SECS)(charge));
            let counted = within(window.secs);
            let spent: f64 = charges
                .by_id
                .values()
                .filter(|charge| charge.agent == window.agent && counted(charge))
                .map(|charge| charge.usd)
                .sum();
            // A NaN anywhere is no room, as in the local meter.
            if !matches!(
                (spent + usd).partial_cmp(&window.cap_usd),
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
            ) {
                return Ok(WindowReservation::Refused { spent_usd: spent });
            }
            charges.next_id += 1;
            let id = charges.next_id;
            charges.by_id.insert(
                id,
                Charge {
                    agent: window.agent.clone(),
                    at: now,
                    usd,
                },
            );
            Ok(WindowReservation::Reserved { id })
        })
    }

    fn settle(&self, id: i64, usd: f64) -> BoxFuture<'_, Result<(), BackendError>> {
        Box::pin(async move {
            let mut charges = self
                .charges
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // A charge dropped meanwhile (older than any window) counts for nothing now.
            if let Some(charge) = charges.by_id.get_mut(&id) {
                charge.usd = usd;
            }
            Ok(())
        })
    }
}
