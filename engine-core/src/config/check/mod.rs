//! What a configuration must hold beyond its types: money that is a number of dollars,
//! durations and sizes an engine can work with. One file per section where a section's
//! checks are long (`turns`).

use std::fmt::Display;
use std::ops::RangeInclusive;

mod oauth;
mod turns;

pub(crate) use turns::provider_problems;
pub use turns::{MAX_TURN_SECS, MAX_TURN_STEPS};

use super::project::{MAX_LIST_ENTRIES, MAX_PROJECT_FILE_BYTES};
use super::{ConfigProblem, DatabaseConfig, EngineConfig};

/// The longest an artifact may live, in seconds (7 days): artifacts are kept in memory
/// for the tools of one conversation, and a longer life only fills the store. (`u64`
/// seconds past this would also overflow the store's clock arithmetic.)
pub const MAX_ARTIFACT_TTL_SECS: u64 = 7 * 24 * 60 * 60;

/// The largest artifact, in bytes (1 GiB).
pub const MAX_ARTIFACT_BYTES: usize = 1 << 30;

/// The most all artifacts together may hold, in bytes (64 GiB): the store is in memory.
pub const MAX_ARTIFACT_CAPACITY_BYTES: usize = 64 << 30;

/// The largest knowledge document, in bytes (64 MiB): each is indexed whole for search.
pub const MAX_KNOWLEDGE_DOCUMENT_BYTES: usize = 64 << 20;

/// The most documents one agent's knowledge base may hold (10 million).
pub const MAX_KNOWLEDGE_DOCUMENTS: usize = 10_000_000;

/// The longest window an agent's spend is counted over, in seconds (31 days).
pub const MAX_SPEND_WINDOW_SECS: u64 = 31 * 24 * 60 * 60;

/// The largest answer the model gateway reads from a provider, in bytes (64 MiB).
pub const MAX_GATEWAY_RESPONSE_BYTES: usize = 64 << 20;

/// The most output tokens a tier may allow one call (a million).
pub const MAX_OUTPUT_TOKENS: u32 = 1_000_000;

/// The longest name an artifact or a knowledge document may have, in bytes.
pub const MAX_NAME_BYTES: usize = 4096;

/// The most distinct words one knowledge search may hold: each is a term SQLite matches
/// in one step that nothing interrupts.
pub const MAX_SEARCH_WORDS: usize = 1024;

/// The most SQLite connections the knowledge store may open.
pub const MAX_KNOWLEDGE_CONNECTIONS: usize = 64;

/// The longest a knowledge call waits for a database another connection holds (60 s):
/// a waiting call holds a connection, and a blocking thread, all that time.
pub const MAX_BUSY_TIMEOUT_MS: u64 = 60 * 1000;

/// The most connections one replica may open to the shared database.
pub const MAX_DATABASE_CONNECTIONS: usize = 1024;

/// The longest a replica may wait between sweeps of what stopped replicas left.
pub const MAX_SWEEP_SECS: u64 = 3600;

/// The most keys one conversation's state may hold.
pub const MAX_STATE_KEYS: usize = 1_000_000;

/// The largest value in a conversation's state, in bytes (64 MiB).
pub const MAX_STATE_VALUE_BYTES: usize = 64 << 20;

/// The longest a conversation's state lives unused, in seconds (30 days).
pub const MAX_STATE_IDLE_SECS: u64 = 30 * 24 * 60 * 60;

/// Whether `text` is an instance's slug: what a plugin may put in a key or a path as is.
fn is_slug(text: &str) -> bool {
    let mut bytes = text.bytes();
    let first_fits = bytes
        .next()
        .is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit());
    first_fits
        && text.len() <= 63
        && bytes.all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
}

/// Every value of `config` out of its range, each as "`key` is value: what to give".
pub(super) fn problems(config: &EngineConfig) -> Vec<ConfigProblem> {
    let mut problems = Vec::new();
    if let Some(slug) = config.instance.as_deref().filter(|slug| !is_slug(slug)) {
        problems.push(ConfigProblem::new(
            "instance",
            format!("is `{slug}`, which is not a slug"),
            "give 1 to 63 of lowercase letters, digits and `-`, beginning with a letter or a digit (`acme-prod`)",
        ));
    }
    for (name, channel) in &config.channels {
        match config.agents.get(&channel.agent) {
            None => problems.push(ConfigProblem::new(
                format!("channels.{name}.agent"),
                format!("names `{}`, which is not a configured agent", channel.agent),
                super::suggest::fix_for_unknown(
                    &channel.agent,
                    config.agents.keys(),
                    |names| format!("name one of {names}, or add [agents.{}]", channel.agent),
                    &format!("add [agents.{}]", channel.agent),
                ),
            )),
            Some(agent) if agent.turn.is_none() => problems.push(ConfigProblem::new(
                format!("channels.{name}.agent"),
                format!("names `{}`, which runs no turns", channel.agent),
                format!("give it `[agents.{}.turn]`", channel.agent),
            )),
            Some(_) => {}
        }
    }
    for (name, agent) in &config.agents {
        if let Some(project) = &agent.project {
            within(
                &mut problems,
                &format!("agents.{name}.project.max_file_bytes"),
                project.max_file_bytes,
                1..=MAX_PROJECT_FILE_BYTES,
                "bytes",
            );
            within(
                &mut problems,
                &format!("agents.{name}.project.max_list_entries"),
                project.max_list_entries,
                1..=MAX_LIST_ENTRIES,
                "entries",
            );
            if project.root.as_os_str().is_empty() {
                problems.push(ConfigProblem::new(
                    format!("agents.{name}.project.root"),
                    "is empty",
                    "give the directory its file tools work in",
                ));
            }
        }
        if let Some(model) = &agent.model {
            money(
                &mut problems,
                &format!("agents.{name}.model.spend_cap_usd"),
                model.spend_cap_usd,
            );
            if let Some(session_cap_usd) = model.session_cap_usd {
                money(
                    &mut problems,
                    &format!("agents.{name}.model.session_cap_usd"),
                    session_cap_usd,
                );
            }
            if let Some(window) = &model.window {
                money(
                    &mut problems,
                    &format!("agents.{name}.model.window.cap_usd"),
                    window.cap_usd,
                );
                within(
                    &mut problems,
                    &format!("agents.{name}.model.window.secs"),
                    window.secs,
                    1..=MAX_SPEND_WINDOW_SECS,
                    "seconds",
                );
            }
        }
    }
    if let Some(gateway) = &config.gateway {
        if !(gateway.base_url.starts_with("http://") || gateway.base_url.starts_with("https://")) {
            problems.push(ConfigProblem::new(
                "gateway.base_url",
                format!("is `{}`", gateway.base_url),
                "give an http:// or https:// URL",
            ));
        }
        within(
            &mut problems,
            "gateway.max_response_bytes",
            gateway.max_response_bytes,
            1024..=MAX_GATEWAY_RESPONSE_BYTES,
            "bytes",
        );
        for (tier, prices) in &gateway.tiers {
            let tier = tier.as_str();
            within(
                &mut problems,
                &format!("gateway.tiers.{tier}.max_output_tokens"),
                prices.max_output_tokens,
                1..=MAX_OUTPUT_TOKENS,
                "tokens",
            );
            money(
                &mut problems,
                &format!("gateway.tiers.{tier}.usd_per_million_input"),
                prices.usd_per_million_input,
            );
            money(
                &mut problems,
                &format!("gateway.tiers.{tier}.usd_per_million_output"),
                prices.usd_per_million_output,
            );
        }
    }
    if let Some(database) = &config.database {
        database_problems(database, &mut problems);
    }
    let artifacts = &config.artifacts;
    within(
        &mut problems,
        "artifacts.ttl_secs",
        artifacts.ttl_secs,
        1..=MAX_ARTIFACT_TTL_SECS,
        "seconds",
    );
    within(
        &mut problems,
        "artifacts.max_bytes",
        artifacts.max_bytes,
        1..=MAX_ARTIFACT_BYTES,
        "bytes",
    );
    within(
        &mut problems,
        "artifacts.capacity_bytes",
        artifacts.capacity_bytes,
        artifacts.max_bytes.max(1)..=MAX_ARTIFACT_CAPACITY_BYTES,
        "bytes (at least artifacts.max_bytes, so that the largest artifact fits)",
    );
    attachment_problems(&config.attachments, &mut problems);
    oauth::problems(config, &mut problems);
    let knowledge = &config.knowledge;
    within(
        &mut problems,
        "knowledge.max_document_bytes",
        knowledge.max_document_bytes,
        1..=MAX_KNOWLEDGE_DOCUMENT_BYTES,
        "bytes",
    );
    within(
        &mut problems,
        "knowledge.max_documents",
        knowledge.max_documents,
        1..=MAX_KNOWLEDGE_DOCUMENTS,
        "documents",
    );
    within(
        &mut problems,
        "knowledge.max_filename_bytes",
        knowledge.max_filename_bytes,
        1..=MAX_NAME_BYTES,
        "bytes",
    );
    within(
        &mut problems,
        "knowledge.max_search_words",
        knowledge.max_search_words,
        1..=MAX_SEARCH_WORDS,
        "words",
    );
    within(
        &mut problems,
        "knowledge.connections",
        knowledge.connections,
        1..=MAX_KNOWLEDGE_CONNECTIONS,
        "connections",
    );
    within(
        &mut problems,
        "knowledge.busy_timeout_ms",
        knowledge.busy_timeout_ms,
        0..=MAX_BUSY_TIMEOUT_MS,
        "milliseconds",
    );
    within(
        &mut problems,
        "artifacts.max_name_bytes",
        artifacts.max_name_bytes,
        1..=MAX_NAME_BYTES,
        "bytes",
    );
    let state = &config.state;
    within(
        &mut problems,
        "state.max_keys",
        state.max_keys,
        1..=MAX_STATE_KEYS,
        "keys",
    );
    within(
        &mut problems,
        "state.max_value_bytes",
        state.max_value_bytes,
        1..=MAX_STATE_VALUE_BYTES,
        "bytes",
    );
    within(
        &mut problems,
        "state.max_conversation_bytes",
        state.max_conversation_bytes,
        state.max_value_bytes.max(1)..=MAX_ARTIFACT_CAPACITY_BYTES,
        "bytes (at least state.max_value_bytes, so that the largest value fits)",
    );
    within(
        &mut problems,
        "state.capacity_bytes",
        state.capacity_bytes,
        state.max_conversation_bytes.max(1)..=MAX_ARTIFACT_CAPACITY_BYTES,
        "bytes (at least state.max_conversation_bytes)",
    );
    within(
        &mut problems,
        "state.idle_secs",
        state.idle_secs,
        1..=MAX_STATE_IDLE_SECS,
        "seconds",
    );
    turns::problems(config, &mut problems);
    problems
}

/// An amount of US dollars must be a finite number, 0 or more: NaN would pass every
/// comparison with a cap, and infinity or a negative price would never reach one.
pub(super) fn money(problems: &mut Vec<ConfigProblem>, key: &str, usd: f64) {
    if !(usd.is_finite() && usd >= 0.0) {
        problems.push(ConfigProblem::new(
            key,
            format!("is {usd}"),
            "give a finite amount of US dollars, 0 or more",
        ));
    }
}

/// The database's URL must name PostgreSQL and keep its password out: a configuration
/// file is read by more people than the secret should be.
fn database_problems(database: &DatabaseConfig, problems: &mut Vec<ConfigProblem>) {
    let url = &database.url;
    let authority = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme))
        .map(|rest| rest.split(['/', '?']).next().unwrap_or_default());
    // `?password=...` (or `&password=`) among the parameters.
    let password_parameter = url.split_once('?').is_some_and(|(_, query)| {
        query.split('&').any(|pair| {
            pair.trim_start()
                .to_ascii_lowercase()
                .starts_with("password=")
        })
    });
    match authority {
        Some(_) if password_parameter => problems.push(ConfigProblem::new(
            "database.url",
            "holds a password",
            format!(
                "remove it from the URL and set the environment variable `{}` instead",
                database.password_env
            ),
        )),
        None => problems.push(ConfigProblem::new(
            "database.url",
            "is not a PostgreSQL URL",
            "give `postgres://user@host:port/database`",
        )),
        // `user:password@host`: a `:` before the `@` that ends the user part.
        Some(authority)
            if authority
                .rsplit_once('@')
                .is_some_and(|(user, _)| user.contains(':')) =>
        {
            problems.push(ConfigProblem::new(
                "database.url",
                "holds a password",
                format!(
                    "remove it from the URL and set the environment variable `{}` instead",
                    database.password_env
                ),
            ))
        }
        Some(_) => {}
    }
    within(
        problems,
        "database.max_connections",
        database.max_connections,
        2..=MAX_DATABASE_CONNECTIONS,
        "connections (and as many again for turns' conversation locks)",
    );
    within(
        problems,
        "database.timeout_ms",
        database.timeout_ms,
        1..=MAX_BUSY_TIMEOUT_MS,
        "milliseconds",
    );
    within(
        problems,
        "database.sweep_secs",
        database.sweep_secs,
        1..=MAX_SWEEP_SECS,
        "seconds",
    );
}

/// The most files one message may bring.
pub const MAX_ATTACHMENTS: usize = 32;

fn attachment_problems(
    attachments: &crate::config::AttachmentLimits,
    problems: &mut Vec<ConfigProblem>,
) {
    // Above `artifacts.max_bytes` it is that: each file is kept as an artifact.
    within(
        problems,
        "attachments.max_bytes",
        attachments.max_bytes,
        1..=MAX_ARTIFACT_BYTES,
        "bytes",
    );
    within(
        problems,
        "attachments.max_count",
        attachments.max_count,
        1..=MAX_ATTACHMENTS,
        "files",
    );
    for media_type in &attachments.media_types {
        if !crate::config::is_media_range(media_type) {
            problems.push(ConfigProblem::new(
                "attachments.media_types",
                format!("holds `{media_type}`"),
                "give media types in lower case as `type/subtype` (`application/pdf`), or `type/*` (`image/*`)".to_owned(),
            ));
        }
    }
}

pub(super) fn within<T: PartialOrd + Display>(
    problems: &mut Vec<ConfigProblem>,
    key: &str,
    value: T,
    range: RangeInclusive<T>,
    unit: &str,
) {
    if !range.contains(&value) {
        problems.push(ConfigProblem::new(
            key,
            format!("is {value}"),
            format!("give {} to {} {unit}", range.start(), range.end()),
        ));
    }
}
