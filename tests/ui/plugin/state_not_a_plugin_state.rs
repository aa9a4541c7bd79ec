// `plugin! { state = T }` names what its tools share, built from the agent's settings: a
// type that does not implement `PluginState` says how to.
pub struct CrmClient;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", state = CrmClient }

fn main() {}
