use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// The CRM key.
#[derive(Secrets)]
struct CrmSecrets {
    #[secret(label = "CRM key")]
    crm_api_key: Secret,
}

fn main() {}
