//! Agents: what each equips from the registry, what it leaves out and why, the catalogs
//! of what it equips, and the hooks its turns run.

use std::any::Any;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use plugin_sdk::engine::{CallIdentity, RedactValues};
use plugin_sdk::hook::Event;
use plugin_sdk::project::Project;
use plugin_sdk::turn::{AgentName, Instance};

use crate::catalog::Catalogs;
use crate::catalog::{self as catalogs, ExternalEntry};
use crate::config::AgentConfig;
use crate::dev::{Desk, DevTool};
use crate::equip::{missing, LeftOut};
use crate::external::{Extensions, ExternalTool, Installed};
use crate::format::Format;
use crate::hooks::{Hook, Hooks, RemoteHook};
use crate::model::Meter;
use crate::provider::Provider;
use crate::registry::Registry;
use crate::tool::Tool;

/// An agent: its configuration, the tools it equips, and the catalogs of those tools.
pub struct Agent {
    name: String,
    /// Its name and the engine instance's slug, as its calls' contexts give them.
    identity: CallIdentity,
    config: AgentConfig,
    registry: Arc<Registry>,
    /// Indexes into the registry's tools, in its order.
    equipped: Vec<usize>,
    /// Whether it equips each of the registry's tools, by index: one look-up per call.
    equips: Vec<bool>,
    left_out: Vec<LeftOut>,
    /// The registry's own when the agent equips every tool: rendered once for both.
    catalogs: Arc<Catalogs>,
    /// The agent's spend over every client, when it grants model access.
    spend_window: Option<Arc<Meter>>,
    /// What its turns' own model requests spend over its window, when it runs turns.
    turn_window: Option<Arc<Meter>>,
    /// The model its turns ask, when it has a `turn` configuration.
    provider: Option<Arc<dyn Provider>>,
    /// Its project root, open, when it has a `project` configuration.
    project: Option<Project>,
    /// The state of each tool's plugin, by the registry's index, for the tools that
    /// share it (`Shared<T>`).
    plugin_states: Vec<Option<AnyState>>,
    /// The external tools of the agent's configuration, and its index among its agents.
    extensions: (Arc<Extensions>, usize),
    /// Every secret the engine's configuration held when the agent was configured.
    redact: Arc<RedactValues>,
    /// The hooks its turns run, in order, at its positions and timeouts.
    hooks: Hooks,
    /// The hooks it would run but for a secret it does not configure, and why.
    hooks_left_out: Vec<LeftOut>,
    /// The dev sessions serving it tools, kept across reloads.
    dev: Arc<Desk>,
}

/// What the agent is made of, besides its configuration and the registry.
pub(crate) struct AgentParts {
    /// The engine instance's slug.
    pub(crate) instance: Instance,
    pub(crate) provider: Option<Arc<dyn Provider>>,
    pub(crate) project: Option<Project>,
    pub(crate) states: BTreeMap<String, AnyState>,
    pub(crate) extensions: (Arc<Extensions>, usize),
    pub(crate) redact: Arc<RedactValues>,
    /// Its spend window, when it grants model access.
    pub(crate) spend_window: Option<Arc<Meter>>,
    /// Its turns' window over their own requests, when it runs turns.
    pub(crate) turn_window: Option<Arc<Meter>>,
    /// The dev sessions serving it tools.
    pub(crate) dev: Arc<Desk>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A plugin's state, built from the agent's settings for it.
pub(crate) type AnyState = Arc<dyn Any + Send + Sync>;

impl Agent {
    pub(crate) fn new(
        name: &str,
        config: AgentConfig,
        registry: &Arc<Registry>,
        parts: AgentParts,
    ) -> Self {
        let AgentParts {
            instance,
            provider,
            project,
            states,
            extensions,
            redact,
            spend_window,
            turn_window,
            dev,
        } = parts;
        let mut equipped = Vec::new();
        let mut left_out = Vec::new();
        for (index, tool) in registry.tools().iter().enumerate() {
            let reasons = missing(name, &config, tool);
            if reasons.is_empty() {
                equipped.push(index);
            } else {
                left_out.push(LeftOut {
                    tool: tool.id().to_owned(),
                    reasons,
                });
            }
        }
        // An agent that equips every linked tool shares the registry's catalogs.
        let catalogs = if left_out.is_empty() {
            Arc::clone(&registry.catalogs)
        } else {
            Arc::default()
        };
        let mut equips = vec![false; registry.tools().len()];
        for &index in &equipped {
            equips[index] = true;
        }
        let plugin_states = registry
            .tools()
            .iter()
            .map(|tool| {
                tool.descriptor().needs.state?;
                states.get(tool.plugin().namespace).cloned()
            })
            .collect();
        let (hooks, hooks_left_out) = registry
            .hooks
            .for_agent(config.hooks.as_deref(), &config.secrets);
        Self {
            name: name.to_owned(),
            identity: CallIdentity {
                instance,
                agent: AgentName::new(name),
            },
            hooks,
            hooks_left_out,
            spend_window,
            turn_window,
            equips,
            config,
            registry: Arc::clone(registry),
            equipped,
            left_out,
            catalogs,
            provider,
            project,
            plugin_states,
            extensions,
            redact,
            dev,
        }
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its name and the engine instance's, as its calls' contexts give them.
    pub(crate) fn identity(&self) -> &CallIdentity {
        &self.identity
    }

    /// Its configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Whether it equips the registry's tool at `index`.
    pub(crate) fn equips(&self, index: usize) -> bool {
        self.equips[index]
    }

    /// Its spend window over every client, when it grants model access.
    pub(crate) fn spend_window(&self) -> Option<&Arc<Meter>> {
        self.spend_window.as_ref()
    }

    /// Its turns' window over their own model requests, when it runs turns.
    pub(crate) fn turn_window(&self) -> Option<&Arc<Meter>> {
        self.turn_window.as_ref()
    }

    /// The model its turns ask, when it has a `turn` configuration.
    pub(crate) fn provider(&self) -> Option<&Arc<dyn Provider>> {
        self.provider.as_ref()
    }

    /// Its project root, open, when it has a `project` configuration.
    pub(crate) fn project(&self) -> Option<&Project> {
        self.project.as_ref()
    }

    /// The state shared by the plugin of the registry's tool at `index`, if it has one.
    pub(crate) fn state_of(&self, index: usize) -> Option<&AnyState> {
        self.plugin_states[index].as_ref()
    }

    /// Every secret the engine's configuration held when it was configured.
    pub(crate) fn redaction(&self) -> &Arc<RedactValues> {
        &self.redact
    }

    /// The hooks its turns run, as configured.
    pub(crate) fn hook_pipeline(&self) -> &Hooks {
        &self.hooks
    }

    /// The hooks a turn starting now runs: as configured, with its dev sessions' hooks
    /// in place of those they override and beside them where bound. A turn's model calls
    /// keep what it started with; `response_sent` reads them again.
    pub(crate) fn hooks_now(&self) -> Cow<'_, Hooks> {
        if self.dev.is_empty() {
            return Cow::Borrowed(&self.hooks);
        }
        let remote = self.dev.hooks();
        if remote.is_empty() {
            return Cow::Borrowed(&self.hooks);
        }
        let remote = remote
            .into_iter()
            .map(|hook| (hook.binding(), hook as Arc<dyn RemoteHook>))
            .collect();
        Cow::Owned(self.hooks.with_remote(remote))
    }

    /// The tools it equips, in the registry's order.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.equipped
            .iter()
            .map(|&index| &self.registry.tools()[index])
    }

    /// The hooks of `event` its turns run, in the order they run.
    pub fn hooks(&self, event: Event) -> &[Hook] {
        self.hooks.of(event)
    }

    /// Whether a hook it runs may replace or regenerate replies (or withhold them when
    /// it fails): its turns are then served non-streamed, and only its.
    pub fn hooks_mutate_responses(&self) -> bool {
        self.hooks_now().mutate_responses()
    }

    /// The hooks it leaves out for want of a secret, and why (`tool` holds the hook's id).
    pub fn hooks_left_out(&self) -> &[LeftOut] {
        &self.hooks_left_out
    }

    /// The tools it leaves out, and why.
    pub fn left_out(&self) -> &[LeftOut] {
        &self.left_out
    }

    /// The catalog of the tools it equips, in `format` for a reader of `locale`.
    ///
    /// The model-facing formats list every tool it equips, since a model always calls
    /// within a turn's conversation. MCP's lists only the tools offered outside a
    /// conversation (see [`Tool::needs_conversation`]): an MCP session has none.
    pub fn catalog(&self, format: Format, locale: &str) -> Bytes {
        self.offer(format, locale).catalog
    }

    /// What one step of a turn offers the model: the catalog, with the external tools
    /// installed as it is rendered, which the step's calls are resolved against.
    pub(crate) fn offer(&self, format: Format, locale: &str) -> Offer {
        let (extensions, agent) = &self.extensions;
        let external = extensions.current();
        let dev = self.dev.tools();
        let catalog = if !dev.is_empty() {
            self.catalog_with_sessions(format, locale, &external, &dev)
        } else {
            let linked = self.catalogs.get(format, locale, || self.tools().collect());
            if external.tools().is_empty() {
                linked
            } else {
                external.catalog(*agent, format, linked)
            }
        };
        Offer {
            catalog,
            external,
            agent: *agent,
            dev,
        }
    }

    /// The catalog while dev sessions serve the agent: rendered for each request (their
    /// tools come and go), the linked tools a session replaces left out, the external
    /// tools and then the sessions' added at the end. MCP's lists only the session tools
    /// offered outside a conversation, as for linked ones.
    #[cold]
    fn catalog_with_sessions(
        &self,
        format: Format,
        locale: &str,
        external: &Installed,
        dev: &[Arc<DevTool>],
    ) -> Bytes {
        let replaced = |tool: &Tool| dev.iter().any(|session| session.id() == tool.id());
        let linked: Vec<&Tool> = self.tools().filter(|tool| !replaced(tool)).collect();
        let linked = Catalogs::default().get(format, locale, || linked);
        let entries: Vec<ExternalEntry<'_>> = external
            .equipped(self.extensions.1)
            // An extension file installed after a session took its tool's id: the
            // session's is the one called, so the one listed.
            .filter(|tool| !dev.iter().any(|session| session.id() == tool.id()))
            .map(|tool| tool.catalog_entry())
            .chain(
                dev.iter()
                    // MCP clients call tools directly: what needs a turn's conversation,
                    // and an action, which only a turn stages, is left out, as linked.
                    .filter(|tool| {
                        format != Format::Mcp
                            || !(tool.decl().needs.conversation || tool.is_action())
                    })
                    .map(|tool| tool.catalog_entry()),
            )
            .collect();
        catalogs::extend(format, &linked, &entries)
    }

    /// The tool a dev session serves it now as `name` (id or wire name), if one does.
    pub(crate) fn dev_tool(&self, name: &str) -> Option<Arc<DevTool>> {
        if self.dev.is_empty() {
            return None;
        }
        self.dev.tool(name)
    }

    /// The tools its dev sessions serve it now.
    pub fn dev_tools(&self) -> Vec<Arc<DevTool>> {
        self.dev.tools()
    }

    /// The external tools it equips now (see [`Engine::install_extensions`](crate::Engine::install_extensions)).
    pub fn external_tools(&self) -> Vec<Arc<ExternalTool>> {
        let (extensions, index) = &self.extensions;
        extensions.current().equipped(*index).cloned().collect()
    }

    /// The external tool called `name` (id or wire name), if it equips one now.
    pub(crate) fn external_tool(&self, name: &str) -> Option<Arc<ExternalTool>> {
        let (extensions, index) = &self.extensions;
        extensions.current().offered(*index, name).cloned()
    }

    /// Its state of the plugin `namespace`, if it was built from `settings`.
    pub(crate) fn plugin_state(&self, namespace: &str, settings: &toml::Table) -> Option<AnyState> {
        if self.config.plugins.get(namespace) != Some(settings) {
            return None;
        }
        let index = self.registry.tools().iter().position(|tool| {
            tool.plugin().namespace == namespace && tool.descriptor().needs.state.is_some()
        })?;
        self.plugin_states[index].clone()
    }
}

/// The tools one step of a turn offers: the catalog the model is sent, and the external
/// tools it lists. A call in the model's answer is resolved against these: a tool
/// installed while the model was asked is offered from the next request on, and never
/// called in answer to a catalog that did not list it.
pub(crate) struct Offer {
    /// The catalog, rendered for the agent's provider.
    pub(crate) catalog: Bytes,
    external: Arc<Installed>,
    /// The agent's index among the engine's, which `external` equips by.
    agent: usize,
    /// The tools dev sessions served when it was rendered (usually none).
    dev: Vec<Arc<DevTool>>,
}

impl std::fmt::Debug for Offer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools: Vec<&str> = self
            .external
            .equipped(self.agent)
            .map(|tool| tool.id())
            .collect();
        f.debug_struct("Offer")
            .field("external_tools", &tools)
            .finish_non_exhaustive()
    }
}

impl Offer {
    /// The external tool called `name` (id or wire name), if this offer lists it.
    pub(crate) fn external_tool(&self, name: &str) -> Option<Arc<ExternalTool>> {
        self.external.offered(self.agent, name).cloned()
    }

    /// The dev session tool called `name` (id or wire name), if this offer lists it.
    #[inline]
    pub(crate) fn dev_tool(&self, name: &str) -> Option<&Arc<DevTool>> {
        if self.dev.is_empty() {
            return None;
        }
        self.dev
            .iter()
            .find(|tool| tool.id() == name || tool.wire_name() == name)
    }
}
