plugin_sdk::plugin! { namespace = "Acme_CRM", engine = ">=0.1" }

fn main() {}
