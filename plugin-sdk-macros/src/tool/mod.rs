//! `#[define_tool]` and `#[define_action]`: parse the attribute, check the function,
//! expand the registration. An action is a tool whose call stages it, with stricter
//! rules on what it takes.

mod check;
mod expand;
mod parse;

pub use expand::qualified;

use proc_macro2::TokenStream;

use crate::attr::Arg;
use crate::errors::Errors;
use crate::function::{entry, Registered};

/// Which attribute: a tool runs when the model calls it, an action is staged then and
/// performed after the reply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Action,
}

impl Kind {
    /// How messages name it.
    pub fn noun(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Action => "action",
        }
    }
}

struct DefineTool;
struct DefineAction;

macro_rules! registered {
    ($ty:ident, $kind:expr, $not_a_function:literal) => {
        impl Registered for $ty {
            const NOT_A_FUNCTION: &'static str = $not_a_function;
            type Checked<'a> = check::Tool<'a>;

            fn check<'a>(
                args: Vec<Arg>,
                function: &'a syn::ItemFn,
                errors: &mut Errors,
            ) -> Option<check::Tool<'a>> {
                let attrs = parse::ToolAttrs::from_args(args, $kind, errors);
                Some(check::tool(attrs, function, $kind, errors))
            }

            fn expand(tool: &check::Tool<'_>) -> TokenStream {
                expand::tool(tool)
            }
        }
    };
}

registered!(
    DefineTool,
    Kind::Tool,
    "`#[define_tool]` goes on an `async fn`"
);
registered!(
    DefineAction,
    Kind::Action,
    "`#[define_action]` goes on an `async fn`"
);

pub fn define_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry::<DefineTool>(attr, item)
}

pub fn define_action(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry::<DefineAction>(attr, item)
}
