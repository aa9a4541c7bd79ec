//! The arguments of `#[define_tool(...)]` and `#[define_action(...)]`, typed, each
//! keeping its span.

use proc_macro2::Span;
use syn::LitStr;

use crate::attr::{Arg, Once};
use crate::errors::Errors;
use crate::localized::Localized;
use crate::symbol::*;

use super::Kind;

#[derive(Default)]
pub struct ToolAttrs {
    pub name: Option<LitStr>,
    pub summary: Option<Localized>,
    pub category: Option<LitStr>,
    pub read_only: Option<(bool, Span)>,
    pub destructive: Option<(bool, Span)>,
    pub idempotent: Option<(bool, Span)>,
    pub open_world: Option<(bool, Span)>,
    pub examples: Vec<LitStr>,
    pub strict: Option<(bool, Span)>,
    pub exclusive: Option<(bool, Span)>,
    pub krate: Option<syn::Path>,
}

impl ToolAttrs {
    /// Sorts the arguments into fields; unknown keys and repeated ones are errors.
    pub fn from_args(args: Vec<Arg>, kind: Kind, errors: &mut Errors) -> Self {
        let known = match kind {
            Kind::Tool => TOOL_KEYS,
            Kind::Action => ACTION_KEYS,
        };
        let mut name = Once::default();
        let mut summary = Once::default();
        let mut category = Once::default();
        let mut read_only = Once::default();
        let mut destructive = Once::default();
        let mut idempotent = Once::default();
        let mut open_world = Once::default();
        let mut strict = Once::default();
        let mut exclusive = Once::default();
        let mut krate = Once::default();
        let mut examples = Vec::new();
        for arg in args {
            let key = arg.key.clone();
            if !known.contains(&&*key.to_string()) {
                if TOOL_KEYS.contains(&&*key.to_string()) {
                    // A tool's attribute that an action fixes for itself.
                    errors.at(key.span(), format_args!("`{key}` is a tool's attribute, and an action does not take it: an action is strict, runs after the reply in the order it was staged, and is annotated as changing things; remove `{key}`"));
                    continue;
                }
                arg.unknown(known, errors);
                continue;
            }
            match &*key.to_string() {
                NAME => name.set(&key, arg.string(errors), errors),
                SUMMARY => summary.set(&key, arg.localized(errors), errors),
                CATEGORY => category.set(&key, arg.string(errors), errors),
                READ_ONLY => read_only.set(&key, arg.flag(errors), errors),
                DESTRUCTIVE => destructive.set(&key, arg.flag(errors), errors),
                IDEMPOTENT => idempotent.set(&key, arg.flag(errors), errors),
                OPEN_WORLD => open_world.set(&key, arg.flag(errors), errors),
                STRICT => strict.set(&key, arg.flag(errors), errors),
                EXCLUSIVE => exclusive.set(&key, arg.flag(errors), errors),
                CRATE => krate.set(&key, arg.path(errors), errors),
                EXAMPLE => examples.extend(arg.string(errors)),
                _ => arg.unknown(known, errors),
            }
        }
        Self {
            name: name.get(),
            summary: summary.get(),
            category: category.get(),
            read_only: read_only.get(),
            destructive: destructive.get(),
            idempotent: idempotent.get(),
            open_world: open_world.get(),
            examples,
            strict: strict.get(),
            exclusive: exclusive.get(),
            krate: krate.get(),
        }
    }
}
