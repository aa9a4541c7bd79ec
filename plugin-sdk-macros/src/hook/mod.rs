//! `#[define_hook]`: parse the attribute, check the function, expand the registration.

mod check;
mod event;
mod expand;
mod parse;

use proc_macro2::TokenStream;

use crate::attr::Arg;
use crate::errors::Errors;
use crate::function::{entry, Registered};

struct DefineHook;

impl Registered for DefineHook {
    const NOT_A_FUNCTION: &'static str = "`#[define_hook]` goes on a function";
    type Checked<'a> = check::Hook<'a>;

    fn check<'a>(
        args: Vec<Arg>,
        function: &'a syn::ItemFn,
        errors: &mut Errors,
    ) -> Option<check::Hook<'a>> {
        let attrs = parse::HookAttrs::from_args(args, errors);
        check::hook(attrs, function, errors)
    }

    fn expand(hook: &check::Hook<'_>) -> TokenStream {
        expand::hook(hook)
    }
}

pub fn define_hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry::<DefineHook>(attr, item)
}
