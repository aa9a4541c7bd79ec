use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1" }

/// The CRM key.
#[derive(Secrets)]
struct CrmSecrets {
    #[secret(label = { "en_US": "CRM key" }, description = "The key of the CRM account.")]
    crm_api_key: Secret,
}

fn main() {}
