//! The store suite: the same tests on the embedded default (SQLite, artifacts in memory)
//! and on PostgreSQL (conversations, artifacts, knowledge), then what only a shared database promises: replicas that see one
//! conversation, one turn at a time, nothing performed or taken twice, budgets counted
//! together, and the faults
//! (a replica gone mid-turn, the database gone, a slow database).
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
mod replicas;
mod suite;
mod support;
mod turns;

/// Each suite test, once per backend.
macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    crate::suite::$test(crate::support::sqlite()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    crate::suite::$test(crate::support::postgres().await).await;
                }
            )*
        }
    };
}

on_both_backends!(
    history_is_kept_in_order_across_appends,
    a_step_stored_again_is_kept_once_and_another_in_its_place_or_past_the_end_is_refused,
    a_conversation_is_its_first_agent_and_subscribers_only,
    a_turn_records_its_end_and_the_state_it_left,
    a_turn_that_keeps_no_trace_records_nothing,
    a_call_outside_a_turn_keeps_its_state_and_records_no_turn,
    an_action_is_recorded_before_it_runs_and_settled_after,
    an_answer_is_replaced_only_where_it_answers_the_same_call,
    an_artifact_is_taken_once_and_only_in_its_conversation,
    knowledge_is_searched_within_the_agents_own_documents,
    knowledge_below_manage_changes_only_its_plugins_documents,
    knowledge_refuses_past_its_limits,
);
