//! Whether a tool's or hook's body can suspend, decided from its syntax.
//!
//! An `async fn` whose body has no `.await` has no suspension point: its future is ready
//! on the first poll. For such a function the macros emit a plain function that runs the
//! body to completion, and the engine calls that one: no boxed future, no timer.
//! The analysis is conservative: a macro it does not know might expand to an `.await`
//! (`tokio::join!`, `select!`), so any other macro counts as one.

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// Standard macros that expand to expressions and cannot suspend by themselves; an
/// `.await` written in their arguments still counts.
const NEVER_SUSPEND: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "cfg",
    "column",
    "concat",
    "dbg",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "env",
    "eprint",
    "eprintln",
    "file",
    "format",
    "format_args",
    "line",
    "matches",
    "module_path",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
];

/// Whether `block` may suspend: it contains an `.await`, or a macro that might expand
/// to one.
pub fn may_suspend(block: &syn::Block) -> bool {
    let mut finder = SuspensionFinder { found: false };
    finder.visit_block(block);
    finder.found
}

struct SuspensionFinder {
    found: bool,
}

impl<'ast> Visit<'ast> for SuspensionFinder {
    fn visit_expr_await(&mut self, _: &'ast syn::ExprAwait) {
        self.found = true;
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let known = mac
            .path
            .segments
            .last()
            .is_some_and(|segment| NEVER_SUSPEND.contains(&segment.ident.to_string().as_str()));
        if !known || mentions_await(&mac.tokens) {
            self.found = true;
        }
    }
}

fn mentions_await(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        TokenTree::Ident(ident) => ident == "await",
        TokenTree::Group(group) => mentions_await(&group.stream()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suspends(body: &str) -> bool {
        may_suspend(&syn::parse_str(body).expect("a block"))
    }

    #[test]
    fn a_body_without_await_or_unknown_macros_never_suspends() {
        assert!(!suspends("{ let x = format!(\"{}\", 1); vec![x]; Ok(x) }"));
        assert!(!suspends(
            "{ if !(a != b) { return 1; } assert!(a > 0, \"{}\", a); 2 }"
        ));
        assert!(!suspends("{ std::println!(\"{}\", 1) }"));
    }

    #[test]
    fn an_await_anywhere_or_an_unknown_macro_may_suspend() {
        assert!(suspends("{ fetch().await }"));
        assert!(suspends("{ let f = async { g().await }; 1 }"));
        assert!(suspends("{ format!(\"{}\", fetch().await) }"));
        assert!(suspends("{ tokio::join!(a(), b()) }"));
        assert!(suspends("{ let x = { let y = select! { a => 1 }; y }; x }"));
    }
}
