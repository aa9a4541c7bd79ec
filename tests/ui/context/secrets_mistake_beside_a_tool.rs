use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

#[derive(Secrets)]
struct CrmKeys {
    #[secret(label = "CRM API key")]
    crm_api_key: Secret,
}

/// Counts contacts.
#[define_tool]
async fn count(keys: CrmKeys) -> usize {
    keys.crm_api_key.expose().len()
}

fn main() {}
