//! The engine refuses two channels with one name, naming both places.

use engine_core::Rule;
use refuse_channel_clash as _;

#[test]
fn two_channels_with_one_name_stop_the_engine_with_every_other_problem() {
    let error = test_support::refusal::linked_refusal();
    let [version, clash] = error.problems() else {
        panic!("two problems expected: {error}");
    };
    assert_eq!(version.rule, Rule::ApiVersion);
    assert_eq!(version.plugin, "other-inboxes 0.0.1");
    assert_eq!(
        version.message,
        "the plugin defines 0 action(s) and 1 channel(s) but declares no `api_version`"
    );
    assert_eq!(clash.rule, Rule::ChannelName);
    assert_eq!(clash.plugin, "other-inboxes 0.0.1");
    assert_eq!(clash.channel.as_deref(), Some("inbox"));
    let report = error.to_string();
    assert!(
        report.contains("[channel-name] plugin other-inboxes 0.0.1, channel `inbox` (tests/refusals/channel-clash/src/lib.rs:"),
        "{report}"
    );
    assert!(
        clash.message.starts_with(
            "the channel name `inbox` is also taken by refuse-channel-clash 0.1.0 (tests/refusals/channel-clash/src/lib.rs:"
        ),
        "{report}"
    );
    assert!(clash.fix.contains(r#"name = "...""#), "{report}");
    test_support::refusal::assert_engine_refuses(
        env!("CARGO_BIN_EXE_refuse-channel-clash"),
        &error,
    );
}
