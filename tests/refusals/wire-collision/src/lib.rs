//! Two tools with different ids and one wire name.
//!
//! Through the macros this cannot happen (namespaces never contain `_`), but a descriptor
//! is plain data: here a second "plugin" is registered by hand, as another generator or a
//! hand-written registration could, with the namespace `shop__cart`. Its tool `add` and
//! the macro-made `shop:cart__add` both go on the wire as `shop__cart__add`.

use plugin_sdk::__private::PluginEntry;
use plugin_sdk::engine::{
    BoxFuture, CallInput, Needs, PluginManifest, SourceLocation, ToolAnnotations, ToolDescriptor,
    ToolEntry,
};
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "shop",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Item {
    pub sku: String,
}

/// Add an item to the cart.
#[define_tool(name = "cart__add")]
pub async fn add_to_cart(item: Item) -> String {
    item.sku
}

static HAND_MADE: PluginManifest = PluginManifest {
    namespace: "shop__cart",
    package: "hand-made-registration",
    version: "0.0.1",
    engine: ">=0.1",
    display_name: None,
    description: None,
};

inventory::submit!(PluginEntry(&HAND_MADE));

fn call(_: CallInput<'_>) -> BoxFuture<'_, Result<String, ToolError>> {
    Box::pin(async { Ok("\"added\"".to_owned()) })
}

inventory::submit!(ToolDescriptor {
    name: "add",
    description: "Add an item to the cart.",
    summary: None,
    category: None,
    annotations: ToolAnnotations {
        read_only: None,
        destructive: None,
        idempotent: None,
        open_world: None,
    },
    strict: true,
    examples: &[],
    plugin: || &HAND_MADE,
    input_schema: plugin_sdk::engine::schema::empty_object_schema,
    output_schema: plugin_sdk::engine::schema::empty_object_schema,
    entry: ToolEntry::Async(call),
    secrets: &[],
    knowledge: None,
    needs: Needs::NOTHING,
    location: SourceLocation {
        file: file!(),
        line: line!(),
    },
});
