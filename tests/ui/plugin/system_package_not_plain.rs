// A Debian package name must survive an argument list unquoted: `apt-get install` gets
// the union of every plugin's names.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    system = { debian = ["poppler-utils", "curl; rm -rf /"] },
}

fn main() {}
