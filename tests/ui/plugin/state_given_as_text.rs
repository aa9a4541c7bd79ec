// `state` takes the type itself, not its name in a string.
plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", state = "CrmClient" }

fn main() {}
