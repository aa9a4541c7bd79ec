use plugin_sdk::prelude::*;

plugin_sdk::plugin! { namespace = "acme-customer-relationships", engine = ">=0.1" }

/// Books an appointment.
#[define_tool(name = "book_an_appointment_with_the_customer_success_team")]
async fn book() -> bool {
    true
}

fn main() {}
