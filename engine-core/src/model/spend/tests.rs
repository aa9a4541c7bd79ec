use super::*;

#[test]
fn a_refusal_by_a_shared_cap_leaves_nothing_reserved_on_the_others() {
    // Two turns of one session: the other turn holds most of the session's room.
    let session = Arc::new(Meter::new(SpendCap::Session, 1.0));
    let spend = TurnSpend::new(1.0, vec![Arc::clone(&session)], None);
    let other = TurnSpend::new(1.0, vec![Arc::clone(&session)], None);
    let held = other.reserve("t", Tier::Fast, 0.8).unwrap();
    // The turn's own meter takes 0.5, then the session refuses it.
    let refused = spend.reserve("t", Tier::Fast, 0.5).err().unwrap();
    assert!(
        matches!(
            refused,
            ModelError::SpendCapReached {
                cap: SpendCap::Session,
                ..
            }
        ),
        "{refused:?}"
    );
    held.settle(None, 0.0);
    // The turn's whole cap is free again: its 0.5 went back when the session refused.
    spend
        .reserve("t", Tier::Fast, 1.0)
        .expect("the refused reservation was given back")
        .settle(Some("m".into()), 0.25);
    assert_eq!(spend.spent_usd(), 0.25);
}

#[test]
fn a_cost_that_is_not_an_amount_of_dollars_is_charged_as_the_worst_case() {
    for cost in [f64::NAN, -1.0, f64::INFINITY] {
        let spend = TurnSpend::new(1.0, Vec::new(), None);
        spend
            .reserve("t", Tier::Fast, 0.4)
            .unwrap()
            .settle(Some("m".into()), cost);
        assert_eq!(spend.spent_usd(), 0.4, "a cost of {cost}");
        assert!(
            spend.reserve("t", Tier::Fast, 0.7).is_err(),
            "a cost of {cost}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_windowed_cap_forgets_charges_older_than_its_window() {
    let window = Meter::windowed(1.0, 60);
    window.reserve(0.7).unwrap();
    window.settle(0.7, 0.7);
    tokio::time::advance(Duration::from_secs(30)).await;
    window.reserve(0.3).unwrap();
    window.settle(0.3, 0.3);
    assert!(
        window.reserve(0.01).is_err(),
        "both charges are in the window"
    );
    tokio::time::advance(Duration::from_secs(30)).await;
    // The first charge left the window; the second is still in it.
    window.reserve(0.7).unwrap();
    assert!(window.reserve(0.01).is_err());
}

#[tokio::test(start_paused = true)]
async fn a_window_continued_longer_keeps_charges_the_shorter_one_still_counts() {
    let short = Meter::windowed(1.0, 60);
    short.reserve(0.5).unwrap();
    short.settle(0.5, 0.5);
    tokio::time::advance(Duration::from_secs(30)).await;
    let long = Meter::continuing(&short, 1.0, 600);
    tokio::time::advance(Duration::from_secs(60)).await;
    // Past the short window: it no longer counts the charge, and must not drop it
    // from the long window, which still does.
    short.reserve(1.0).unwrap();
    short.settle(1.0, 0.0);
    assert!(
        long.reserve(0.75).is_err(),
        "the charge is in the long window"
    );
    long.reserve(0.5).unwrap();
}

#[test]
fn a_nan_worst_case_or_cap_refuses() {
    assert!(Meter::new(SpendCap::Turn, 1.0).reserve(f64::NAN).is_err());
    assert!(Meter::new(SpendCap::Turn, f64::NAN).reserve(0.0).is_err());
}
