//! The store suite: the same tests on every backend (memory, the embedded default of
//! SQLite with artifacts in memory, and PostgreSQL; each store on every backend that has
//! it), then what only a shared database
//! promises: replicas that see one conversation, one turn at a time, nothing performed or
//! taken twice, budgets counted together, and the faults (a replica gone mid-turn, the
//! database gone, a slow database).
//!
//! The PostgreSQL half needs the server `bash scripts/test` starts
//! (`PLUGIN_SDK_POSTGRES_URL`); without one it fails, saying so.

plugin_sdk::plugin! {
    namespace = "probe",
    engine = ">=0.1",
    api_version = 0,
}

mod budgets;
mod faults;
mod grants;
mod listing;
mod replicas;
mod suite;
mod support;
mod turns;

/// Suite tests, on one backend: `$stores` makes its stores, fresh for each test.
macro_rules! on_backend {
    ($backend:ident, $stores:expr, [$($test:ident),* $(,)?]) => {
        mod $backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    crate::suite::$test($stores).await;
                }
            )*
        }
    };
}

/// Each suite test on every backend that has its store: conversations, artifacts and
/// knowledge in memory, on SQLite (artifacts in memory) and on PostgreSQL; spend ledgers
/// in memory and on PostgreSQL (SQLite keeps none).
macro_rules! on_every_backend {
    (
        conversations: [$($conversations:ident),* $(,)?],
        knowledge: [$($knowledge:ident),* $(,)?],
        spend: [$($spend:ident),* $(,)?] $(,)?
    ) => {
        on_backend!(memory, crate::support::memory(), [$($conversations,)* $($knowledge,)* $($spend),*]);
        on_backend!(sqlite, crate::support::sqlite(), [$($conversations,)* $($knowledge),*]);
        on_backend!(postgres, crate::support::postgres().await, [$($conversations,)* $($knowledge,)* $($spend),*]);
    };
}

on_every_backend!(
    conversations: [
        history_is_kept_in_order_across_appends,
        a_step_stored_again_is_kept_once_and_another_in_its_place_or_past_the_end_is_refused,
        a_conversation_is_its_first_agent_and_subscribers_only,
        a_turn_records_its_end_and_the_state_it_left,
        a_turn_that_keeps_no_trace_records_nothing,
        a_call_outside_a_turn_keeps_its_state_and_records_no_turn,
        an_action_is_recorded_before_it_runs_and_settled_after,
        an_answer_is_replaced_only_where_it_answers_the_same_call,
        an_artifact_is_taken_once_and_only_in_its_conversation,
        an_agents_conversations_are_listed_most_recently_active_first_a_page_at_a_time,
    ],
    knowledge: [
        knowledge_is_searched_within_the_agents_own_documents,
        knowledge_below_manage_changes_only_its_plugins_documents,
        knowledge_refuses_past_its_limits,
        knowledge_lists_by_name_and_ranks_more_matches_first_within_the_limit,
        knowledge_managed_in_one_agent_reaches_nothing_of_another,
        knowledge_lists_a_page_at_a_time_after_its_cursor,
        knowledge_an_operator_wrote_is_changed_by_a_plugin_only_at_manage,
        knowledge_wiped_for_one_agent_leaves_every_other,
    ],
    spend: [
        a_window_reserves_up_to_its_cap_and_refuses_past_it_saying_what_it_holds,
        a_settled_reservation_counts_what_it_cost_not_what_it_reserved,
        a_charge_leaves_the_window_once_it_is_older_than_the_window,
    ],
);
