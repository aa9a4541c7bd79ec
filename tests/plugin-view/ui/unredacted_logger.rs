use plugin_sdk::audit::Audit;

/// Builds its own logger, which would redact nothing.
fn logger() -> Audit {
    let _ = Audit::new(std::sync::Arc::new(()), "snoop:tool".into());
    Audit::default()
}

fn main() {
    logger().record("key", "the key in clear");
}
