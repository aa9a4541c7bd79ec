//! `[agents.<name>.turn]` and `[providers.<name>]`: each agent's turn and the providers
//! they name.

use super::{money, within};
use super::{MAX_GATEWAY_RESPONSE_BYTES, MAX_OUTPUT_TOKENS, MAX_SPEND_WINDOW_SECS};
use crate::config::{ConfigProblem, EngineConfig, ProviderConfig};

/// The most model requests, tool calls or parallel calls a turn may be allowed.
pub const MAX_TURN_STEPS: u32 = 10_000;

/// The longest deadline a turn may have, in seconds (a day).
pub const MAX_TURN_SECS: u64 = 24 * 60 * 60;

/// Each agent's turn: a provider that exists, a key it has, limits in range.
pub(super) fn problems(config: &EngineConfig, problems: &mut Vec<ConfigProblem>) {
    for (name, provider) in &config.providers {
        provider_problems(&format!("providers.{name}."), provider, problems);
    }
    for (name, agent) in &config.agents {
        let Some(turn) = &agent.turn else { continue };
        let key = |field: &str| format!("agents.{name}.turn.{field}");
        // A provider the configuration does not name may come from the engine's builder.
        if let Some(provider) = config.providers.get(&turn.provider) {
            if let Some(secret) = &provider.api_key_secret {
                if !agent.secrets.contains_key(secret) {
                    problems.push(ConfigProblem::new(
                        format!("agents.{name}.secrets.{secret}"),
                        format!(
                            "is missing: the provider `{}` takes its API key from it",
                            turn.provider
                        ),
                        format!("set ENGINE_SECRET__{name}__{secret}"),
                    ));
                }
            }
        }
        within(
            problems,
            &key("max_model_requests"),
            turn.max_model_requests,
            1..=MAX_TURN_STEPS,
            "requests",
        );
        within(
            problems,
            &key("max_tool_calls"),
            turn.max_tool_calls,
            0..=MAX_TURN_STEPS,
            "calls",
        );
        within(
            problems,
            &key("max_parallel_tools"),
            turn.max_parallel_tools,
            1..=MAX_TURN_STEPS,
            "calls",
        );
        within(
            problems,
            &key("max_identical_calls"),
            turn.max_identical_calls,
            1..=MAX_TURN_STEPS,
            "calls",
        );
        within(
            problems,
            &key("max_actions_per_turn"),
            turn.max_actions_per_turn,
            0..=MAX_TURN_STEPS,
            "actions",
        );
        within(
            problems,
            &key("deadline_secs"),
            turn.deadline_secs,
            1..=MAX_TURN_SECS,
            "seconds",
        );
        within(
            problems,
            &key("max_output_tokens"),
            turn.max_output_tokens,
            1..=MAX_OUTPUT_TOKENS,
            "tokens",
        );
        if let Some(timeout) = turn.tool_timeout_ms {
            within(
                problems,
                &key("tool_timeout_ms"),
                timeout,
                1..=MAX_TURN_SECS * 1000,
                "milliseconds",
            );
        }
        money(problems, &key("spend_cap_usd"), turn.spend_cap_usd);
        if let Some(window) = &turn.window {
            money(problems, &key("window.cap_usd"), window.cap_usd);
            within(
                problems,
                &key("window.secs"),
                window.secs,
                1..=MAX_SPEND_WINDOW_SECS,
                "seconds",
            );
        }
    }
}

/// What a provider's values must hold, wherever it is described: `prefix` leads each
/// key (`providers.local.` in the configuration, nothing in a drop-in file).
pub(crate) fn provider_problems(
    prefix: &str,
    provider: &ProviderConfig,
    problems: &mut Vec<ConfigProblem>,
) {
    money(
        problems,
        &format!("{prefix}usd_per_million_input"),
        provider.usd_per_million_input,
    );
    money(
        problems,
        &format!("{prefix}usd_per_million_output"),
        provider.usd_per_million_output,
    );
    within(
        problems,
        &format!("{prefix}max_response_bytes"),
        provider.max_response_bytes,
        1..=MAX_GATEWAY_RESPONSE_BYTES,
        "bytes",
    );
    within(
        problems,
        &format!("{prefix}max_retries"),
        provider.max_retries,
        0..=10,
        "retries",
    );
    if !(provider.base_url.starts_with("http://") || provider.base_url.starts_with("https://")) {
        problems.push(ConfigProblem::new(
            format!("{prefix}base_url"),
            format!("is `{}`", provider.base_url),
            "give an http:// or https:// URL",
        ));
    }
}
