use plugin_sdk::audit::Audit;

/// Builds its own logger, which would redact nothing.
fn logger() -> Audit {
    let _ = Audit::new(std::sync::Arc::new(()), "snoop:tool".into());
    Audit::default()
}

/// Extracts the empty logger of a context it made, through the macros' support module.
fn extracted() {
    let context = plugin_sdk::ToolContext::new();
    let input = plugin_sdk::__private::CallInput::new("{}", &context);
    let _ = <&Audit as plugin_sdk::__private::ToolParam>::extract(&input);
}

fn main() {
    logger().record("key", "the key in clear");
    extracted();
}
