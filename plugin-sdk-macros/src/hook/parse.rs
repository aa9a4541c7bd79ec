//! The arguments of `#[define_hook(...)]`, typed, each keeping its span.

use proc_macro2::Span;
use syn::LitStr;

use crate::attr::{Arg, Once};
use crate::errors::Errors;
use crate::localized::Localized;
use crate::symbol::*;

pub struct HookAttrs {
    pub event: Option<LitStr>,
    pub name: Option<LitStr>,
    pub summary: Option<Localized>,
    pub position: Option<(u64, Span)>,
    pub timeout_ms: Option<(u64, Span)>,
    pub mutates_response: Option<(bool, Span)>,
    /// The reply when the hook fails, with the span of `fail_closed`.
    pub fail_closed: Option<(Localized, Span)>,
    pub krate: Option<syn::Path>,
}

/// The longest timeout a hook may declare: it runs inside every turn of its event.
pub const MAX_TIMEOUT_MS: u64 = 60_000;

impl HookAttrs {
    /// Sorts the arguments into fields; unknown keys and repeated ones are errors.
    pub fn from_args(args: Vec<Arg>, errors: &mut Errors) -> Self {
        let mut event = Once::default();
        let mut name = Once::default();
        let mut summary = Once::default();
        let mut position = Once::default();
        let mut timeout_ms = Once::default();
        let mut mutates_response = Once::default();
        let mut fail_closed = Once::default();
        let mut krate = Once::default();
        for arg in args {
            let key = arg.key.clone();
            match &*key.to_string() {
                EVENT => event.set(&key, arg.string(errors), errors),
                NAME => name.set(&key, arg.string(errors), errors),
                SUMMARY => summary.set(&key, arg.localized(errors), errors),
                POSITION => position.set(&key, arg.int(0..=u32::MAX.into(), errors), errors),
                TIMEOUT_MS => timeout_ms.set(&key, arg.int(1..=MAX_TIMEOUT_MS, errors), errors),
                MUTATES_RESPONSE => mutates_response.set(&key, arg.flag(errors), errors),
                FAIL_CLOSED => {
                    let text = arg.localized(errors).map(|text| (text, key.span()));
                    fail_closed.set(&key, text, errors);
                }
                CRATE => krate.set(&key, arg.path(errors), errors),
                _ => arg.unknown(HOOK_KEYS, errors),
            }
        }
        Self {
            event: event.get(),
            name: name.get(),
            summary: summary.get(),
            position: position.get(),
            timeout_ms: timeout_ms.get(),
            mutates_response: mutates_response.get(),
            fail_closed: fail_closed.get(),
            krate: krate.get(),
        }
    }
}
