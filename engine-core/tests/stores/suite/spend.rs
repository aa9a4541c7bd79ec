//! What every spend ledger does: a window's cap across everything charged within it, what
//! a call cost in place of what it reserved, and charges that age out of the window.

use std::sync::Arc;
use std::time::Duration;

use engine_core::model::{SharedWindow, SpendLedger, WindowReservation};

use crate::support::Stores;

fn ledger(stores: &Stores) -> Arc<dyn SpendLedger> {
    let ledger = stores.spend.as_ref();
    Arc::clone(ledger.expect("run on a backend with a spend ledger"))
}

async fn reserve(window: &SharedWindow, ledger: &dyn SpendLedger, usd: f64) -> WindowReservation {
    ledger.reserve(window, usd).await.unwrap()
}

// Amounts in halves and quarters: exact in binary, so no rounding decides.

pub async fn a_window_reserves_up_to_its_cap_and_refuses_past_it_saying_what_it_holds(
    stores: Stores,
) {
    let ledger = ledger(&stores);
    let support = SharedWindow::new(Arc::clone(&ledger), "support", 1.0, 3600);
    assert!(matches!(
        reserve(&support, &*ledger, 0.5).await,
        WindowReservation::Reserved { .. }
    ));
    assert!(matches!(
        reserve(&support, &*ledger, 0.5).await,
        WindowReservation::Reserved { .. }
    ));
    assert_eq!(
        reserve(&support, &*ledger, 0.25).await,
        WindowReservation::Refused { spent_usd: 1.0 }
    );
    // A refusal says what the window holds, not its cap.
    let half = SharedWindow::new(Arc::clone(&ledger), "half", 1.0, 3600);
    assert!(matches!(
        reserve(&half, &*ledger, 0.5).await,
        WindowReservation::Reserved { .. }
    ));
    assert_eq!(
        reserve(&half, &*ledger, 0.75).await,
        WindowReservation::Refused { spent_usd: 0.5 }
    );
    // Another agent's window counts its own charges only.
    let sales = SharedWindow::new(Arc::clone(&ledger), "sales", 1.0, 3600);
    assert!(matches!(
        reserve(&sales, &*ledger, 1.0).await,
        WindowReservation::Reserved { .. }
    ));
    // A NaN is no room, never a pass.
    let other = SharedWindow::new(Arc::clone(&ledger), "other", 1.0, 3600);
    assert!(matches!(
        reserve(&other, &*ledger, f64::NAN).await,
        WindowReservation::Refused { .. }
    ));
}

pub async fn a_settled_reservation_counts_what_it_cost_not_what_it_reserved(stores: Stores) {
    let ledger = ledger(&stores);
    let window = SharedWindow::new(Arc::clone(&ledger), "support", 1.0, 3600);
    let WindowReservation::Reserved { id } = reserve(&window, &*ledger, 1.0).await else {
        panic!("an empty window has room for its cap");
    };
    ledger.settle(id, 0.25).await.unwrap();
    assert!(matches!(
        reserve(&window, &*ledger, 0.75).await,
        WindowReservation::Reserved { .. }
    ));
    assert_eq!(
        reserve(&window, &*ledger, 0.125).await,
        WindowReservation::Refused { spent_usd: 1.0 }
    );
}

pub async fn a_charge_leaves_the_window_once_it_is_older_than_the_window(stores: Stores) {
    let ledger = ledger(&stores);
    // Two seconds: the refusal right after the charge holds even on a slow machine.
    let window = SharedWindow::new(Arc::clone(&ledger), "support", 1.0, 2);
    assert!(matches!(
        reserve(&window, &*ledger, 1.0).await,
        WindowReservation::Reserved { .. }
    ));
    assert_eq!(
        reserve(&window, &*ledger, 0.5).await,
        WindowReservation::Refused { spent_usd: 1.0 }
    );
    tokio::time::sleep(Duration::from_millis(2300)).await;
    assert!(matches!(
        reserve(&window, &*ledger, 0.5).await,
        WindowReservation::Reserved { .. }
    ));
    // A longer window over the same charges still counts the old one.
    let day = SharedWindow::new(Arc::clone(&ledger), "support", 1.5, 86_400);
    assert_eq!(
        reserve(&day, &*ledger, 0.25).await,
        WindowReservation::Refused { spent_usd: 1.5 }
    );
}
