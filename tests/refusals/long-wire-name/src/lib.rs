//! A namespace and a tool name that are each valid but together too long for providers.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "northwind-traders-back-office",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Quarter {
    pub year: u16,
    pub quarter: u8,
}

/// Summarize the shipments of a quarter by region.
#[define_tool]
pub async fn summarize_quarterly_shipments_by_region(quarter: Quarter) -> String {
    format!("{}-Q{}", quarter.year, quarter.quarter)
}
