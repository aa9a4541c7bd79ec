//! `#[define_tool]`: parse the attribute, check the function, expand the registration.

mod check;
mod expand;
mod parse;

pub use expand::{last_span, qualified};

use proc_macro2::TokenStream;

use crate::attr::Arg;
use crate::errors::Errors;
use crate::function::{entry, Registered};

struct DefineTool;

impl Registered for DefineTool {
    const NOT_A_FUNCTION: &'static str = "`#[define_tool]` goes on an `async fn`";
    type Checked<'a> = check::Tool<'a>;

    fn check<'a>(
        args: Vec<Arg>,
        function: &'a syn::ItemFn,
        errors: &mut Errors,
    ) -> Option<check::Tool<'a>> {
        let attrs = parse::ToolAttrs::from_args(args, errors);
        Some(check::tool(attrs, function, errors))
    }

    fn expand(tool: &check::Tool<'_>) -> TokenStream {
        expand::tool(tool)
    }
}

pub fn define_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry::<DefineTool>(attr, item)
}
