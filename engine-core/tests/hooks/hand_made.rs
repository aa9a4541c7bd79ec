//! Descriptors written by hand: what the macro would refuse, refused at start-up, and a
//! mutation the descriptor does not declare, ignored.

use std::time::Duration;

use engine_core::{Limits, Rule, StartupError};
use plugin_sdk::engine::{
    HookDescriptor, HookEntry, HookHandler, HookInput, HookResult, LocalizedText, Needs,
    PluginManifest, SourceLocation,
};
use plugin_sdk::prelude::*;

use crate::support::{build, run};

static HAND_MADE: PluginManifest = PluginManifest {
    namespace: "hand-made",
    package: "hand-made",
    version: "0.1.0",
    engine: ">=0.1",
    display_name: None,
    description: None,
    api_version: None,
    state: None,
    system: plugin_sdk::engine::System::NONE,
    catalogue: plugin_sdk::engine::Catalogue::NONE,
    oauth: &[],
};

fn hand_made_plugin() -> &'static PluginManifest {
    &HAND_MADE
}

fn replaces_everything(_: HookInput<'_, ResponseGenerated>) -> HookResult<ResponseGenerated> {
    Ok(ResponseOutcome::ReplaceResponse {
        message: "hijacked".into(),
    })
}

const fn hand_made(
    name: &'static str,
    mutates_response: bool,
    timeout: Duration,
) -> HookDescriptor {
    HookDescriptor {
        name,
        description: "Written by hand.",
        summary: None,
        position: 0,
        timeout,
        mutates_response,
        fail_closed: None,
        plugin: hand_made_plugin,
        handler: HookHandler::ResponseGenerated(HookEntry::Ready(replaces_everything)),
        needs: Needs::NOTHING,
        secrets: &[],
        location: SourceLocation {
            file: "hand_made.rs",
            line: 1,
        },
    }
}

static UNDECLARED_MUTATION: HookDescriptor = hand_made("undeclared", false, Duration::from_secs(1));

#[tokio::test]
async fn a_mutation_from_a_hook_not_declared_mutating_is_ignored() {
    let engine = build(vec![&UNDECLARED_MUTATION], Limits::default()).unwrap();
    let (outcome, asked) = run(&engine, "hello", false, &["original"]).await;
    assert!(asked[0].stream);
    assert_eq!(outcome.reply, "original");
}

static ZERO_TIMEOUT: HookDescriptor = hand_made("zero", true, Duration::ZERO);
static TWIN: HookDescriptor = hand_made("zero", true, Duration::from_secs(1));

fn mutating_pre_model(_: HookInput<'_, MessageReceived>) -> HookResult<MessageReceived> {
    Ok(PreModelOutcome::Observe)
}

static MUTATES_BEFORE_MODEL: HookDescriptor = HookDescriptor {
    handler: HookHandler::MessageReceived(HookEntry::Ready(mutating_pre_model)),
    ..hand_made("before", true, Duration::from_secs(1))
};

#[test]
fn start_up_refuses_duplicate_hook_ids_misplaced_mutation_and_a_zero_timeout() {
    let error = build(
        vec![&ZERO_TIMEOUT, &TWIN, &MUTATES_BEFORE_MODEL],
        Limits::default(),
    )
    .err()
    .expect("the engine refuses to start");
    let found = problems(&error);
    assert_eq!(
        found,
        [
            (Rule::HookMutation, Some("hand-made:before")),
            (Rule::DuplicateId, Some("hand-made:zero")),
            (Rule::HookTimeout, Some("hand-made:zero")),
        ]
    );
    let report = error.to_string();
    assert!(
        report.contains(
            "[hook-mutation] plugin hand-made 0.1.0, hook `hand-made:before` (hand_made.rs:1)"
        ),
        "{report}"
    );
}

fn observes_sent(_: HookInput<'_, ResponseSent>) -> HookResult<ResponseSent> {
    Ok(())
}

static FAIL_CLOSED_AFTER_SENDING: HookDescriptor = HookDescriptor {
    handler: HookHandler::ResponseSent(HookEntry::Ready(observes_sent)),
    fail_closed: Some(LocalizedText::Plain("Sorry.")),
    ..hand_made("after_sending", false, Duration::from_secs(1))
};

static FAIL_CLOSED_WITHOUT_MUTATING: HookDescriptor = HookDescriptor {
    fail_closed: Some(LocalizedText::Plain("Sorry.")),
    ..hand_made("without_mutating", false, Duration::from_secs(1))
};

static FAIL_CLOSED_REPLACING: HookDescriptor = HookDescriptor {
    fail_closed: Some(LocalizedText::Plain("Sorry.")),
    ..hand_made("replacing", true, Duration::from_secs(1))
};

#[test]
fn start_up_refuses_fail_closed_where_the_hook_cannot_halt_or_replace() {
    let error = build(
        vec![
            &FAIL_CLOSED_AFTER_SENDING,
            &FAIL_CLOSED_WITHOUT_MUTATING,
            &FAIL_CLOSED_REPLACING,
        ],
        Limits::default(),
    )
    .err()
    .expect("the engine refuses to start");
    let found = problems(&error);
    assert_eq!(
        found,
        [
            (Rule::HookFailClosed, Some("hand-made:after_sending")),
            (Rule::HookFailClosed, Some("hand-made:without_mutating")),
        ]
    );
}

/// What a refusal found: each problem's rule and hook, in order.
fn problems(error: &StartupError) -> Vec<(Rule, Option<&str>)> {
    error
        .problems()
        .iter()
        .map(|problem| (problem.rule, problem.hook.as_deref()))
        .collect()
}
