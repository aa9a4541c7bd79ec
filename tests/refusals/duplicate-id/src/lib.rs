//! Two tools of one plugin that both take the name `lookup`.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "dup",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Query {
    pub text: String,
}

pub mod orders {
    use super::*;

    /// Find an order.
    #[define_tool(name = "lookup")]
    pub async fn find_order(query: Query) -> String {
        query.text
    }
}

pub mod customers {
    use super::*;

    /// Find a customer.
    #[define_tool(name = "lookup")]
    pub async fn find_customer(query: Query) -> String {
        query.text
    }
}
