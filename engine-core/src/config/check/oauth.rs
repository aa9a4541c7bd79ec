//! What is wrong with `[oauth]` and the agents' OAuth clients, on their own (whether a
//! linked plugin declares each client's provider is `linked_config`'s).

use super::within;
use crate::config::oauth::{is_endpoint, MAX_CONNECT_TTL_SECS};
use crate::config::{AgentConfig, ConfigProblem, EngineConfig};

/// What is wrong with `[oauth]` and the agents' clients on their own.
pub(super) fn problems(config: &EngineConfig, problems: &mut Vec<ConfigProblem>) {
    let oauth = &config.oauth;
    let any_client = config.agents.values().any(|agent| !agent.oauth.is_empty());
    match &oauth.public_url {
        Some(url) if !is_endpoint(url) || url.ends_with('/') => problems.push(ConfigProblem::new(
            "oauth.public_url",
            format!("is `{url}`"),
            "give the URL a browser reaches this engine at, https (or http on a loopback address), without a trailing `/`",
        )),
        None if any_client => problems.push(ConfigProblem::new(
            "oauth.public_url",
            "is not set, and an agent has an OAuth client",
            "give the URL a browser reaches this engine at: providers send users back to <public_url>/oauth/callback",
        )),
        _ => {}
    }
    within(
        problems,
        "oauth.connect_ttl_secs",
        oauth.connect_ttl_secs,
        60..=MAX_CONNECT_TTL_SECS,
        "seconds",
    );
    for (name, agent) in &config.agents {
        client_problems(name, agent, problems);
    }
}

fn client_problems(name: &str, agent: &AgentConfig, problems: &mut Vec<ConfigProblem>) {
    for (provider, client) in &agent.oauth {
        let key = format!("agents.{name}.oauth.\"{provider}\"");
        if provider.split_once(':').is_none() {
            problems.push(ConfigProblem::new(
                key.clone(),
                "does not name a plugin's provider",
                "key it `\"<namespace>:<id>\"`, as `engine plugins` lists a plugin's OAuth providers",
            ));
        }
        if client.client_id.trim().is_empty() {
            problems.push(ConfigProblem::new(
                format!("{key}.client_id"),
                "is empty",
                "give the client id the provider registered",
            ));
        }
        if !agent.secrets.contains_key(&client.client_secret) {
            problems.push(ConfigProblem::new(
                format!("{key}.client_secret"),
                format!("names `{}`, which is not one of the agent's secrets", client.client_secret),
                format!(
                    "set ENGINE_SECRET__{name}__{} to the client's secret (it names the secret; its value is never in this file)",
                    client.client_secret
                ),
            ));
        }
        for (field, url) in [
            ("authorize_url", &client.authorize_url),
            ("token_url", &client.token_url),
        ] {
            if let Some(url) = url.as_ref().filter(|url| !is_endpoint(url)) {
                problems.push(ConfigProblem::new(
                    format!("{key}.{field}"),
                    format!("is `{url}`"),
                    "give an https URL (or http on a loopback address, for a test's provider)",
                ));
            }
        }
    }
}
