//! The rules a hook function follows; each error says what to write instead.

use proc_macro2::Span;
use syn::{ItemFn, Type};

use super::event::{closest, Event};
use super::parse::HookAttrs;
use crate::attr::sdk_path;
use crate::errors::Errors;
use crate::function;
use crate::localized::Localized;

/// Where a hook runs among its event's hooks when it does not say.
const DEFAULT_POSITION: u32 = 100;
/// How long a hook may run when it does not say.
const DEFAULT_TIMEOUT_MS: u64 = 2_000;

/// A checked hook, ready to expand.
pub struct Hook<'a> {
    pub sdk: syn::Path,
    pub function: &'a ItemFn,
    pub event: Event,
    pub name: String,
    pub name_span: Span,
    pub description: String,
    pub summary: Option<Localized>,
    pub position: u32,
    pub timeout_ms: u64,
    pub mutates_response: bool,
    /// The reply sent instead of observing when the hook fails.
    pub fail_closed: Option<Localized>,
    pub params: Vec<&'a Type>,
}

/// The checked hook, or `None` when its event is missing or unknown (with that error
/// recorded). Every other mistake is recorded too, so the author sees all of them.
pub fn hook<'a>(attrs: HookAttrs, function: &'a ItemFn, errors: &mut Errors) -> Option<Hook<'a>> {
    let event = event(attrs.event.as_ref(), errors);
    let common = function::common(
        function,
        "hook",
        attrs.name.as_ref(),
        attrs.summary.as_ref(),
        (
            "name concrete types (references need no lifetime: write `event: &MessageReceived`)",
            "describes the hook to the people who configure agents",
        ),
        errors,
    );
    if event == Some(Event::ResponseSent) {
        for ty in &common.params {
            if takes_state(ty) {
                errors.push(syn::Error::new_spanned(ty, "a `response_sent` hook cannot take `&State`: it runs once the turn is stored, so what it wrote would be lost; read or write the state in a `response_generated` hook, which runs before the turn is stored"));
            }
        }
    }
    let mutates_response = match (attrs.mutates_response, event) {
        (Some((true, span)), Some(event)) if event != Event::ResponseGenerated => {
            errors.at(
                span,
                format_args!(
                    "`mutates_response` is for `response_generated` hooks, and this is a `{}` hook: {}; remove `mutates_response`",
                    event.name(),
                    event.allows()
                ),
            );
            false
        }
        (flag, _) => flag.is_some_and(|(value, _)| value),
    };
    let fail_closed = attrs.fail_closed.and_then(|(text, span)| {
        text.check(errors);
        fail_closed_fits(event?, mutates_response, span, errors).then_some(text)
    });

    Some(Hook {
        sdk: sdk_path(attrs.krate),
        function,
        event: event?,
        name: common.name,
        name_span: common.name_span,
        description: common.description,
        summary: attrs.summary,
        // Parsed within u32's range.
        position: attrs.position.map_or(DEFAULT_POSITION, |(value, _)| {
            u32::try_from(value).unwrap_or(u32::MAX)
        }),
        timeout_ms: attrs
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT_MS, |(value, _)| value),
        mutates_response,
        fail_closed,
        params: common.params,
    })
}

/// `&State`, by its last path segment: no other reference a hook takes is named so
/// (`&mut` is refused for every parameter).
fn takes_state(ty: &Type) -> bool {
    matches!(ty, Type::Reference(reference) if reference.mutability.is_none() && matches!(&*reference.elem,
        Type::Path(path) if path.qself.is_none()
            && path.path.segments.last().is_some_and(|segment| segment.ident == "State")))
}

/// Whether a hook at `event` can fail closed: before the model it halts the turn, at
/// `response_generated` it replaces the reply (which `mutates_response` allows), and at
/// `response_sent` the reply is already out.
fn fail_closed_fits(event: Event, mutates_response: bool, span: Span, errors: &mut Errors) -> bool {
    let problem = match event {
        Event::ConversationStart | Event::MessageReceived => return true,
        Event::ResponseGenerated if mutates_response => return true,
        Event::ResponseGenerated => "a `response_generated` hook fails closed by replacing the reply, which needs `mutates_response`: add `mutates_response`, or remove `fail_closed`",
        Event::ResponseSent => "a `response_sent` hook cannot fail closed: the reply is already sent, so it only observes; remove `fail_closed`, or move the hook to `response_generated` with `mutates_response`",
    };
    errors.at(span, problem);
    false
}

fn event(lit: Option<&syn::LitStr>, errors: &mut Errors) -> Option<Event> {
    let events = Event::ALL
        .map(|event| format!("`{}`", event.name()))
        .join(", ");
    let Some(lit) = lit else {
        errors.at(
            Span::call_site(),
            format_args!(
                "a hook names the event it runs at: add `event = \"...\"`, one of {events}"
            ),
        );
        return None;
    };
    let name = lit.value();
    let found = Event::from_name(&name);
    if found.is_none() {
        let hint = closest(&name)
            .map(|event| format!("did you mean `{}`? ", event.name()))
            .unwrap_or_default();
        errors.at(
            lit.span(),
            format_args!("there is no hook event `{name}`: {hint}the events are {events}"),
        );
    }
    found
}
