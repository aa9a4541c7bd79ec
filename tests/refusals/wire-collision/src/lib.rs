//! Two tools with different ids and one wire name.
//!
//! Through the macros this cannot happen (namespaces never contain `_`), but a descriptor
//! is plain data: here a second "plugin" is registered by hand, as another generator or a
//! hand-written registration could, with the namespace `shop__cart`. Its tool `add` and
//! the macro-made `shop:cart__add` both go on the wire as `shop__cart__add`.

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

test_support::hand_made_plugin!(HAND_MADE, "shop__cart", package = "hand-made-registration");
test_support::hand_made_tool!(HAND_MADE, "add");
