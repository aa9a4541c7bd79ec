// A plugin's defaults are for its own tools: a variable every process reads (the loader's,
// the search path, a proxy) is the image's to set, not one plugin's.
plugin_sdk::plugin! {
    namespace = "demo",
    engine = ">=0.1",
    system = { env = { LD_PRELOAD = "/usr/lib/libfast.so" } },
}

fn main() {}
