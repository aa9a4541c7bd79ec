//! Spend caps that hold under concurrency. A model call reserves what it may cost at most
//! on every cap it counts against (its turn's, its session's, its agent's window) before it
//! runs; the check and the reservation are one step under each meter's lock, so calls in
//! flight together never pass a cap. After the call the reservation settles to the actual
//! cost; a call cut before its answer (deadline, cancellation, a dropped future, a broken
//! answer) stays charged what it may have cost.
//!
//! With replicas on a shared database, the agent's window is also counted there
//! ([`SharedWindow`]), by every replica together: the same reserve-then-settle, each step
//! one transaction under the agent's lock.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use plugin_sdk::model::{ModelError, SpendCap, Tier};
use tokio::time::Instant;

mod memory;
mod shared;

pub use memory::MemorySpendLedger;
pub(crate) use shared::SharedReservation;
pub use shared::{SharedWindow, SpendLedger, WindowReservation};

/// One cap over what was charged and what calls in flight reserved: a turn's, a session's,
/// or an agent's over a sliding window.
#[derive(Debug)]
pub(crate) struct Meter {
    cap: SpendCap,
    cap_usd: f64,
    window: Option<Duration>,
    /// Shared with the meter this one continues, if any (see [`continuing`](Self::continuing)).
    ledger: Arc<Mutex<Ledger>>,
}

#[derive(Debug, Default)]
struct Ledger {
    /// Charges outside a window: only their sum matters.
    settled_usd: f64,
    /// Charges within a window, oldest first, with when they were charged.
    recent: VecDeque<(Instant, f64)>,
    /// How long charges are kept: the longest window of the meters that share the
    /// ledger (a reload's new window beside turns still counting in the old one).
    kept: Duration,
    /// The worst cases of the calls in flight.
    reserved_usd: f64,
}

impl Meter {
    /// A cap of `cap_usd` for as long as the meter lives.
    pub(crate) fn new(cap: SpendCap, cap_usd: f64) -> Self {
        Self {
            cap,
            cap_usd,
            window: None,
            ledger: Arc::default(),
        }
    }

    /// A cap of `cap_usd` on any `secs` seconds.
    pub(crate) fn windowed(cap_usd: f64, secs: u64) -> Self {
        Self {
            cap: SpendCap::Window { secs },
            cap_usd,
            window: Some(Duration::from_secs(secs)),
            ledger: Arc::new(Mutex::new(Ledger {
                kept: Duration::from_secs(secs),
                ..Ledger::default()
            })),
        }
    }

    /// A cap of `cap_usd` on any `secs` seconds over what `before` counted and counts:
    /// the window of an agent whose grant a reload changed keeps its history (what the
    /// old window still held, for a longer one). Turns under way keep counting against
    /// the old cap, in the same ledger.
    pub(crate) fn continuing(before: &Meter, cap_usd: f64, secs: u64) -> Self {
        let window = Duration::from_secs(secs);
        let mut ledger = before.lock();
        ledger.kept = ledger.kept.max(window);
        drop(ledger);
        Self {
            cap: SpendCap::Window { secs },
            cap_usd,
            window: Some(window),
            ledger: Arc::clone(&before.ledger),
        }
    }

    /// Whether it caps `cap_usd` on any `secs` seconds.
    pub(crate) fn is_window(&self, cap_usd: f64, secs: u64) -> bool {
        self.cap_usd == cap_usd && self.window == Some(Duration::from_secs(secs))
    }

    /// Reserves `usd` if the cap has room for it beside what was charged and reserved.
    fn reserve(&self, usd: f64) -> Result<(), ModelError> {
        let mut ledger = self.lock();
        let committed = ledger.charged_usd(self.window) + ledger.reserved_usd;
        // A NaN anywhere is no room: the comparison then fails, and the call is refused.
        let fits = matches!(
            (committed + usd).partial_cmp(&self.cap_usd),
            Some(Ordering::Less | Ordering::Equal)
        );
        if !fits {
            return Err(ModelError::SpendCapReached {
                cap: self.cap,
                cap_usd: self.cap_usd,
                spent_usd: committed,
                call_usd: usd,
            });
        }
        ledger.reserved_usd += usd;
        Ok(())
    }

    /// What the cap has room for beside what was charged and reserved.
    fn room_usd(&self) -> f64 {
        let mut ledger = self.lock();
        self.cap_usd - (ledger.charged_usd(self.window) + ledger.reserved_usd)
    }

    /// Gives back a reservation of `reserved_usd` and charges `charged_usd` instead.
    fn settle(&self, reserved_usd: f64, charged_usd: f64) {
        let mut ledger = self.lock();
        ledger.reserved_usd = (ledger.reserved_usd - reserved_usd).max(0.0);
        if charged_usd > 0.0 {
            match self.window {
                Some(_) => ledger.recent.push_back((Instant::now(), charged_usd)),
                None => ledger.settled_usd += charged_usd,
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ledger> {
        self.ledger
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Ledger {
    /// What was charged, within `window` if there is one (charges older than every
    /// window of the ledger are dropped).
    fn charged_usd(&mut self, window: Option<Duration>) -> f64 {
        let Some(window) = window else {
            return self.settled_usd;
        };
        let now = Instant::now();
        while self
            .recent
            .front()
            .is_some_and(|&(at, _)| now.duration_since(at) >= self.kept)
        {
            self.recent.pop_front();
        }
        self.recent
            .iter()
            .filter(|&&(at, _)| now.duration_since(at) < window)
            .map(|&(_, usd)| usd)
            .sum()
    }
}

/// One recorded model call.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCall {
    /// The tool that asked.
    pub tool: String,
    /// The tier it asked for.
    pub tier: Tier,
    /// The model that answered; `None` when the call was cut before an answer.
    pub model: Option<String>,
    /// The cost charged, in US dollars: the provider's price of the answer, or for a cut
    /// call what it may have cost.
    pub cost_usd: f64,
}

/// What a turn spent on model calls from tools, against the agent's caps: the turn's own,
/// and the session's and the agent's window it shares with other turns.
#[derive(Debug)]
pub struct TurnSpend {
    turn: Meter,
    /// The session's and the agent's window meters, shared with other turns.
    shared: Vec<Arc<Meter>>,
    /// The agent's window as every replica counts it, with a shared database.
    window: Option<SharedWindow>,
    calls: Mutex<Vec<ModelCall>>,
}

impl TurnSpend {
    /// A turn allowed to spend `cap_usd`, within the `shared` caps and the agent's
    /// `window` across replicas, if there is one.
    pub(crate) fn new(cap_usd: f64, shared: Vec<Arc<Meter>>, window: Option<SharedWindow>) -> Self {
        Self {
            turn: Meter::new(SpendCap::Turn, cap_usd),
            shared,
            window,
            calls: Mutex::default(),
        }
    }

    /// The agent's window across replicas, with a shared database.
    pub(crate) fn shared_window(&self) -> Option<&SharedWindow> {
        self.window.as_ref()
    }

    /// What the turn was charged so far (calls in flight not included).
    pub fn spent_usd(&self) -> f64 {
        self.lock_calls().iter().map(|call| call.cost_usd).sum()
    }

    /// Every model call of the turn, in the order they ended.
    pub fn calls(&self) -> Vec<ModelCall> {
        self.lock_calls().clone()
    }

    /// Reserves `worst_usd` on every cap for a call of `tool` at `tier`, or says which cap
    /// has no room (then nothing stays reserved).
    pub(crate) fn reserve(
        &self,
        tool: &str,
        tier: Tier,
        worst_usd: f64,
    ) -> Result<Reservation<'_>, ModelError> {
        reserve_on_each(
            || std::iter::once(&self.turn).chain(self.shared.iter().map(Arc::as_ref)),
            worst_usd,
        )?;
        Ok(Reservation {
            spend: self,
            tool: tool.to_owned(),
            tier,
            worst_usd,
            settled: false,
        })
    }

    fn lock_calls(&self) -> MutexGuard<'_, Vec<ModelCall>> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Reserves `usd` on each of `meters`, or on none of them: the refusal of the first
/// without room.
fn reserve_on_each<'a, I>(meters: impl Fn() -> I, usd: f64) -> Result<(), ModelError>
where
    I: Iterator<Item = &'a Meter>,
{
    for (index, meter) in meters().enumerate() {
        if let Err(refused) = meter.reserve(usd) {
            for reserved in meters().take(index) {
                reserved.settle(usd, 0.0);
            }
            return Err(refused);
        }
    }
    Ok(())
}

/// A cost as charged: a finite amount of dollars, 0 or more, else (a provider's NaN, a
/// negative price) the worst case, never free.
fn chargeable(cost_usd: f64, worst_usd: f64) -> f64 {
    if cost_usd.is_finite() && cost_usd >= 0.0 {
        cost_usd
    } else {
        worst_usd
    }
}

/// What a turn's own model requests spend, against the agent's caps for them: the
/// turn's, and the agent's window over its turns (with a shared database, also counted
/// there by every replica).
#[derive(Debug)]
pub(crate) struct RequestSpend {
    turn: Meter,
    window: Option<Arc<Meter>>,
    shared: Option<SharedWindow>,
}

impl RequestSpend {
    /// A turn allowed to spend `cap_usd` on its requests, within `window` and `shared`.
    pub(crate) fn new(
        cap_usd: f64,
        window: Option<Arc<Meter>>,
        shared: Option<SharedWindow>,
    ) -> Self {
        Self {
            turn: Meter::new(SpendCap::Turn, cap_usd),
            window,
            shared,
        }
    }

    /// What the turn's cap has room for.
    pub(crate) fn room_usd(&self) -> f64 {
        self.turn.room_usd()
    }

    /// Reserves `worst_usd`, a request's worst case, on every cap, or says which cap has
    /// no room (then nothing stays reserved).
    pub(crate) async fn reserve(
        &self,
        worst_usd: f64,
    ) -> Result<RequestReservation<'_>, ModelError> {
        let meters = || std::iter::once(&self.turn).chain(self.window.as_deref());
        reserve_on_each(meters, worst_usd)?;
        let mut reservation = RequestReservation {
            spend: self,
            worst_usd,
            shared: None,
            settled: false,
        };
        if let Some(window) = &self.shared {
            match window.reserve(worst_usd).await {
                Ok(shared) => reservation.shared = Some(shared),
                Err(refused) => {
                    reservation.charge(0.0);
                    return Err(refused);
                }
            }
        }
        Ok(reservation)
    }
}

/// A request's worst case, reserved on every cap it counts against: settled to what the
/// provider reported, or, dropped unsettled (the request was cut), charged in full.
#[must_use = "a reservation dropped unsettled charges the request's worst case"]
pub(crate) struct RequestReservation<'a> {
    spend: &'a RequestSpend,
    worst_usd: f64,
    shared: Option<SharedReservation>,
    settled: bool,
}

impl RequestReservation<'_> {
    /// The request is over and cost `cost_usd` (see [`chargeable`]).
    pub(crate) async fn settle(mut self, cost_usd: f64) {
        let cost_usd = chargeable(cost_usd, self.worst_usd);
        self.charge(cost_usd);
        if let Some(shared) = self.shared.take() {
            shared.settle(cost_usd).await;
        }
    }

    fn charge(&mut self, cost_usd: f64) {
        self.settled = true;
        let spend = self.spend;
        for meter in std::iter::once(&spend.turn).chain(spend.window.as_deref()) {
            meter.settle(self.worst_usd, cost_usd);
        }
    }
}

impl Drop for RequestReservation<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.charge(self.worst_usd);
        }
    }
}

/// A call's worst case, reserved on every cap it counts against. Settled with
/// [`settle`](Self::settle); dropped unsettled (the call was cut), it charges the worst
/// case.
#[must_use = "a reservation dropped unsettled charges the call's worst case"]
pub(crate) struct Reservation<'a> {
    spend: &'a TurnSpend,
    tool: String,
    tier: Tier,
    worst_usd: f64,
    settled: bool,
}

impl Reservation<'_> {
    /// The call is over: `model` answered (or none did) and it cost `cost_usd`. A cost
    /// that is not a finite amount of dollars, 0 or more (a gateway's NaN, a negative
    /// price), is charged as the worst case instead: never as free. Answers what was
    /// charged.
    pub(crate) fn settle(mut self, model: Option<String>, cost_usd: f64) -> f64 {
        let charged = chargeable(cost_usd, self.worst_usd);
        if charged != cost_usd {
            tracing::warn!(
                target: "model",
                tool = %self.tool,
                cost_usd,
                worst_usd = self.worst_usd,
                "the gateway gave a cost that is not an amount of dollars: charged the worst case"
            );
        }
        self.charge(model, charged);
        charged
    }

    fn charge(&mut self, model: Option<String>, cost_usd: f64) {
        self.settled = true;
        let spend = self.spend;
        for meter in std::iter::once(&spend.turn).chain(spend.shared.iter().map(Arc::as_ref)) {
            meter.settle(self.worst_usd, cost_usd);
        }
        if model.is_none() && cost_usd == 0.0 {
            return;
        }
        spend.lock_calls().push(ModelCall {
            tool: std::mem::take(&mut self.tool),
            tier: self.tier,
            model,
            cost_usd,
        });
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.settled {
            tracing::info!(
                target: "model",
                tool = %self.tool,
                tier = self.tier.as_str(),
                cost_usd = self.worst_usd,
                "a model call was cut before its answer: charged what it may have cost"
            );
            self.charge(None, self.worst_usd);
        }
    }
}

#[cfg(test)]
mod tests;
