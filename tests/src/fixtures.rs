//! One arguments type per shape the strict schema must get right, each used by a tool so
//! that the registry and the oracle see exactly what an engine would.

use plugin_sdk::prelude::*;

/// Scalars of every kind.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Flat {
    /// A name.
    pub name: String,
    pub count: u32,
    pub delta: i64,
    pub ratio: f64,
    pub enabled: bool,
    pub initial: char,
}

/// A postal address.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Address {
    pub street: String,
    pub city: String,
}

/// A struct inside a struct, and a list of them.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Nested {
    /// Where to deliver.
    ///
    /// The street and the city, both required.
    pub delivery: Address,
    pub previous: Vec<Address>,
}

/// How urgent a ticket is.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Low,
    Normal,
    /// Page someone now.
    Urgent,
}

/// What to do with a ticket.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Close it.
    Close {
        reason: String,
    },
    /// Hand it to someone.
    Assign {
        assignee: String,
        priority: Priority,
    },
    Reopen,
}

/// The same actions, internally tagged.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaggedAction {
    Close {
        reason: String,
    },
    Escalate {
        level: u8,
    },
    /// Hand it to someone at an address: a struct inside a variant.
    Hand {
        who: Address,
    },
    /// A unit variant: the tag alone.
    Reopen,
}

/// Enums of both kinds.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Enums {
    pub priority: Priority,
    pub action: Action,
    pub tagged: TaggedAction,
}

/// `Option` at every level.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Optionals {
    /// Null when unknown.
    pub nickname: Option<String>,
    pub age: Option<u8>,
    pub address: Option<Address>,
    pub priority: Option<Priority>,
    pub tags: Option<Vec<Option<String>>>,
}

/// Lists and boxes.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Collections {
    pub numbers: Vec<f32>,
    pub matrix: Vec<Vec<i32>>,
    pub boxed: Box<Address>,
    pub actions: Vec<Action>,
}

/// A tree: a type that contains itself.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct TreeNode {
    pub label: String,
    /// The children, possibly none.
    pub children: Vec<TreeNode>,
    pub parent: Option<Box<TreeNode>>,
}

/// A generic page, used with a concrete item type.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub cursor: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Echoed {
    pub ok: bool,
}

macro_rules! fixture_tool {
    ($($tool:ident($args:ty)),* $(,)?) => {$(
        /// Accept the fixture and answer `{"ok": true}`.
        #[define_tool]
        pub async fn $tool(args: $args) -> Echoed {
            let _ = args;
            Echoed { ok: true }
        }
    )*};
}

fixture_tool!(
    flat(Flat),
    nested(Nested),
    enums(Enums),
    optionals(Optionals),
    collections(Collections),
    tree(TreeNode),
    page_of_addresses(Page<Address>),
);

/// Answer with the engine's idea of the time: a tool without arguments.
#[define_tool(read_only)]
pub async fn no_arguments(ctx: &ToolContext) -> Echoed {
    let _ = ctx;
    Echoed { ok: true }
}
