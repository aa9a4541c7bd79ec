//! The engine refuses two channels with one name, naming both places.

use engine_core::Rule;
use refuse_channel_clash as _;

#[test]
fn two_channels_with_one_name_stop_the_engine() {
    let error = test_support::refusal::linked_refusal();
    let [problem] = error.problems() else {
        panic!("one problem expected: {error}");
    };
    assert_eq!(problem.rule, Rule::ChannelName);
    assert_eq!(problem.plugin, "refuse-channel-clash 0.1.0");
    assert_eq!(problem.channel.as_deref(), Some("inbox"));
    let report = error.to_string();
    assert!(
        report.contains("[channel-name] plugin refuse-channel-clash 0.1.0, channel `inbox` (tests/refusals/channel-clash/src/lib.rs:"),
        "{report}"
    );
    assert!(
        problem.message.starts_with(
            "the channel name `inbox` is also taken by refuse-channel-clash 0.1.0 (tests/refusals/channel-clash/src/lib.rs:"
        ),
        "{report}"
    );
    assert!(problem.fix.contains(r#"name = "...""#), "{report}");
    test_support::refusal::assert_engine_refuses(
        env!("CARGO_BIN_EXE_refuse-channel-clash"),
        &error,
    );
}
