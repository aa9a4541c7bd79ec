// A plugin has one state, and its tools take it once: a second `Shared<T>` (its own or
// another plugin's) is refused at that parameter.
use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "demo", engine = ">=0.1", state = Crm }

pub struct Crm;

impl PluginState for Crm {
    type Settings = CrmSettings;

    fn build(_: CrmSettings) -> Result<Self, String> {
        Ok(Crm)
    }
}

#[derive(Deserialize)]
pub struct CrmSettings {}

pub struct Mail;

impl PluginState for Mail {
    type Settings = CrmSettings;

    fn build(_: CrmSettings) -> Result<Self, String> {
        Ok(Mail)
    }
}

/// Pings the CRM and the mail server.
#[define_tool]
async fn ping(crm: Shared<Crm>, mail: Shared<Mail>) -> bool {
    let _ = (&*crm, &*mail);
    true
}

fn main() {}
