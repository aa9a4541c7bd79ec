//! Reloading the configuration while the engine runs: the agents (their tools, grants,
//! secrets, providers, project roots and plugin settings) and the providers are replaced
//! whole; what the engine opened at start-up (stores, gateway, channels, the extensions
//! directory) stays, and a reload that would change it is refused. The one store a
//! reload may open is the conversations', for the first agent that runs turns.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arc_swap::ArcSwap;
use plugin_sdk::engine::RedactValues;
use plugin_sdk::turn::Instance;

use super::backends::{self, Backends};
use super::error::EngineError;
use super::{assemble, linked_config, project_roots, Engine};
use crate::agent::{Agent, AgentParts};
use crate::config::{EngineConfig, SpendWindow, DEFAULT_INSTANCE};
use crate::dev::DevSessions;
use crate::external::{Extensions, Installed};
use crate::model::Meter;
use crate::provider::{self as drop_in, DropIns, Provider};
use crate::redact::redactor;
use crate::registry::Registry;

/// The agents as configured, and what else a reload replaces with them.
pub(super) struct Configured {
    /// What they were configured from.
    pub(super) config: EngineConfig,
    /// Sorted by name (the configuration's map order).
    pub(super) agents: Vec<Arc<Agent>>,
    /// Every secret the configuration holds, and those of the configurations before it.
    pub(super) redact: Arc<RedactValues>,
    /// The external tools, as these agents equip them.
    pub(super) extensions: Arc<Extensions>,
    /// The drop-in providers, as these agents use them: swapped whole by an install of
    /// the providers directory. Here rather than beside, so that a reload swaps the
    /// agents and the providers made with their keys in one step.
    pub(super) drop_ins: ArcSwap<DropIns>,
    /// The spend window of every agent that ever granted model access, by name, removed
    /// ones too: a reload, even one that removes an agent and adds it back, is no way to
    /// a fresh budget.
    windows: BTreeMap<String, Arc<Meter>>,
    /// The same for the windows of the agents' turns over their own model requests.
    turn_windows: BTreeMap<String, Arc<Meter>>,
}

impl Configured {
    /// The agents of `config` over `registry`, with the providers the builder was given;
    /// `previous` is the configuration it replaces, whose agents' spend windows, plugin
    /// states and secrets carry over.
    pub(super) fn build(
        config: EngineConfig,
        registry: &Arc<Registry>,
        given: &BTreeMap<String, Arc<dyn Provider>>,
        opened: &Backends,
        dev: &DevSessions,
        previous: Option<&Configured>,
    ) -> Result<Self, EngineError> {
        // Refused by the caller (start-up, reload) before anything was opened.
        project_roots::create_roots(&config)?;
        // None yet: `Engine::reload` equips the set installed when it swaps this in.
        let extensions = Arc::new(Extensions::new(&Installed::empty(), config.agents.values()));
        // Secrets only ever join the redactor: one a reload removes may still be in a
        // reply in flight, or in a log line about the old configuration.
        let redact = match previous {
            Some(previous) => Arc::new(
                previous
                    .redact
                    .extended(config.secret_values().map(str::to_owned)),
            ),
            None => redactor(&config),
        };
        let mut windows = previous.map_or_else(BTreeMap::new, |previous| previous.windows.clone());
        let mut turn_windows =
            previous.map_or_else(BTreeMap::new, |previous| previous.turn_windows.clone());
        let mut agents = Vec::with_capacity(config.agents.len());
        let instance = Instance::new(config.instance.as_deref().unwrap_or(DEFAULT_INSTANCE));
        for (index, (name, agent)) in config.agents.iter().enumerate() {
            let before = previous.and_then(|previous| previous.agent(name));
            let parts = AgentParts {
                instance: instance.clone(),
                provider: backends::agent_provider(&config, agent, given, opened)?,
                project: agent
                    .project
                    .as_ref()
                    .map(assemble::open_project)
                    .transpose()?,
                states: assemble::build_plugin_states(name, agent, registry, before.map(|a| &**a))?,
                extensions: (Arc::clone(&extensions), index),
                redact: Arc::clone(&redact),
                spend_window: agent
                    .model
                    .map(|grant| window_of(&mut windows, name, grant.window())),
                turn_window: agent
                    .turn
                    .as_ref()
                    .map(|turn| window_of(&mut turn_windows, name, turn.window())),
                dev: dev.desk(name),
            };
            agents.push(Arc::new(Agent::new(name, agent.clone(), registry, parts)));
        }
        Ok(Self {
            config,
            agents,
            redact,
            extensions,
            // None yet: start-up and `Engine::reload` equip the files.
            drop_ins: ArcSwap::from_pointee(DropIns::default()),
            windows,
            turn_windows,
        })
    }

    /// The agent called `name`.
    pub(super) fn agent(&self, name: &str) -> Option<&Arc<Agent>> {
        self.agents
            .binary_search_by(|agent| agent.name().cmp(name))
            .ok()
            .map(|index| &self.agents[index])
    }
}

/// The spend window of the agent `name`, capped as `window` says: the one it had, or
/// one that continues its count under the new cap, or a new one.
fn window_of(
    windows: &mut BTreeMap<String, Arc<Meter>>,
    name: &str,
    window: SpendWindow,
) -> Arc<Meter> {
    let meter = match windows.get(name) {
        Some(before) if before.is_window(window.cap_usd, window.secs) => return Arc::clone(before),
        Some(before) => Meter::continuing(before, window.cap_usd, window.secs),
        None => Meter::windowed(window.cap_usd, window.secs),
    };
    let meter = Arc::new(meter);
    windows.insert(name.to_owned(), Arc::clone(&meter));
    meter
}

/// What a reload changed, for the log and the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// The agents the new configuration adds.
    pub added: Vec<String>,
    /// The agents it removes (their turns under way finish as they started).
    pub removed: Vec<String>,
    /// The agents it keeps, configured anew.
    pub kept: Vec<String>,
}

/// The reload of [`Engine::reload`].
pub(super) fn reload(engine: &Engine, mut config: EngineConfig) -> Result<Reloaded, EngineError> {
    config.ensure_an_agent();
    let mut problems = config.problems();
    // The drop-in providers installed now, as the new configuration sees them.
    let dropped_in = super::checked_provider_files(
        engine.provider_files(),
        &config,
        &engine.given_providers.keys().cloned().collect(),
    );
    problems.extend(linked_config::problems(
        &config,
        &engine.runtime.registry,
        &engine.given_providers,
        &drop_in::offered(&dropped_in),
    ));
    config.refuse(problems)?;
    // One reload at a time, each built on the one before. A poisoned lock only means a
    // reload panicked; what it guards was swapped whole or not at all.
    let _reloading = engine
        .reloading
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let previous = engine.configured.load_full();
    let restart = needs_restart(
        &previous.config,
        &config,
        engine.runtime.knowledge.is_some(),
        engine.runtime.oauth.is_some(),
    );
    if !restart.is_empty() {
        return Err(EngineError::NeedsRestart(restart));
    }
    project_roots::refuse_overlaps(&config, engine.extensions_now().current().files())?;
    // Before anything is built: a plugin's state or a provider refusing its settings
    // may quote a new secret in its error, which is logged.
    if let Some(log) = &engine.log_redaction {
        let secrets: Vec<String> = config.secret_values().map(str::to_owned).collect();
        log.widen(&secrets);
    }
    // The first agent that runs turns in an engine that had none: its conversations
    // are kept where start-up would have kept them.
    let runs_turns = config.agents.values().any(|agent| agent.turn.is_some());
    let conversations = if runs_turns && !engine.conversations_for_turns.load(Ordering::Relaxed) {
        Some(backends::open_conversations(
            &config,
            false,
            &engine.backends,
        )?)
    } else {
        None
    };
    // Built without holding up installs of external tools (a plugin's state may take
    // its time); those installed meanwhile are equipped as the new agents equip them.
    let configured = Configured::build(
        config,
        &engine.runtime.registry,
        &engine.given_providers,
        &engine.backends,
        &engine.runtime.dev,
        Some(&previous),
    )?;
    let _replacing = engine
        .replacing
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Again under the lock installs take: a file installed while this was built was
    // checked against the roots before it.
    let installed = engine.extensions_now().current();
    project_roots::refuse_overlaps(&configured.config, installed.files())?;
    configured
        .extensions
        .equip(&installed, configured.config.agents.values());
    let names = |configured: &Configured| -> Vec<String> {
        configured.config.agents.keys().cloned().collect()
    };
    let (before, after) = (names(&previous), names(&configured));
    let reloaded = Reloaded {
        added: after
            .iter()
            .filter(|name| !before.contains(name))
            .cloned()
            .collect(),
        removed: before
            .iter()
            .filter(|name| !after.contains(name))
            .cloned()
            .collect(),
        kept: after
            .iter()
            .filter(|name| before.contains(name))
            .cloned()
            .collect(),
    };
    // The files as installed, equipped for the new agents (their keys may have changed),
    // under the lock installs take: none is lost between the two.
    configured.drop_ins.store(Arc::new(engine.equip_drop_ins(
        engine.provider_files(),
        &configured.config,
        &configured.redact,
    )));
    engine.configured.store(Arc::new(configured));
    if let Some(conversations) = conversations {
        engine.runtime.conversations.store(Arc::new(conversations));
        engine
            .conversations_for_turns
            .store(true, Ordering::Relaxed);
    }
    engine
        .offers_changed
        .send_modify(|generation| *generation += 1);
    Ok(reloaded)
}

/// What of `next` differs from `now` in a way only a restart applies.
fn needs_restart(
    now: &EngineConfig,
    next: &EngineConfig,
    has_knowledge: bool,
    has_broker: bool,
) -> Vec<String> {
    let mut restart = Vec::new();
    let mut differs = |changed: bool, what: &str| {
        if changed {
            restart.push(what.to_owned());
        }
    };
    differs(now.data_dir() != next.data_dir(), "`data_dir`");
    // What plugins key their storage by: a change under way would file a conversation's
    // calls under two keys.
    differs(now.instance != next.instance, "`instance`");
    differs(now.artifacts != next.artifacts, "`[artifacts]`");
    differs(now.knowledge != next.knowledge, "`[knowledge]`");
    differs(now.state != next.state, "`[state]`");
    differs(now.gateway != next.gateway, "`[gateway]`");
    differs(now.channels != next.channels, "`[channels]`");
    differs(now.extensions != next.extensions, "`[extensions]`");
    differs(now.database != next.database, "`[database]`");
    differs(now.oauth != next.oauth, "`[oauth]`");
    let has_clients = next.agents.values().any(|agent| !agent.oauth.is_empty());
    differs(
        has_clients && !has_broker,
        "an agent has an OAuth client, and the engine runs no OAuth broker",
    );
    let grants_knowledge = next.agents.values().any(|agent| agent.knowledge.is_some());
    differs(
        grants_knowledge && !has_knowledge,
        "an agent grants knowledge, and the engine opened no knowledge store",
    );
    restart
}

#[cfg(test)]
mod tests {
    use plugin_sdk::model::Tier;

    use super::*;

    fn config(text: &str) -> EngineConfig {
        EngineConfig::parse(text).expect("the configuration parses")
    }

    /// Whether a new turn of `a` may spend `usd`; spends it if so.
    fn spends(engine: &Engine, usd: f64) -> bool {
        let turn = engine.turn("a").unwrap();
        let Ok(reservation) = turn.spend().reserve("t", Tier::Fast, usd) else {
            return false;
        };
        reservation.settle(Some("m".into()), usd);
        true
    }

    #[test]
    fn a_spend_window_keeps_its_count_across_reloads_that_change_it_or_remove_the_agent() {
        // Amounts in halves and quarters: exact in binary, so no rounding decides.
        let grant = |window_cap: f64| {
            config(&format!(
                "[agents.a]\nmodel = {{ spend_cap_usd = 0.5, window = {{ cap_usd = {window_cap}, secs = 3600 }} }}\n"
            ))
        };
        let engine = Engine::builder().config(grant(0.5)).build().unwrap();
        assert!(spends(&engine, 0.25) && spends(&engine, 0.25));
        assert!(!spends(&engine, 0.125), "the window is full");

        engine.reload(grant(0.5)).unwrap();
        assert!(!spends(&engine, 0.125), "the same window");
        engine.reload(grant(0.75)).unwrap();
        assert!(!spends(&engine, 0.5), "the count is kept under the new cap");
        assert!(spends(&engine, 0.25));
        engine.reload(config("[agents.b]\n")).unwrap();
        engine.reload(grant(1.0)).unwrap();
        assert!(
            !spends(&engine, 0.5),
            "an agent removed and added back keeps its count"
        );
        assert!(spends(&engine, 0.25));
    }
}
