//! The shape every registered function shares, tool or hook: a free, non-generic,
//! non-variadic function whose parameters are types the engine supplies.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, LitStr, ReturnType, Signature, Type};

use crate::errors::Errors;
use crate::names;

/// The parameter types of `signature`, after reporting what a `kind` (`"tool"`, `"hook"`)
/// cannot be: generic (`generic_hint` says what to write instead), variadic, a method.
pub fn params<'a>(
    signature: &'a Signature,
    kind: &str,
    generic_hint: &str,
    errors: &mut Errors,
) -> Vec<&'a Type> {
    if !signature.generics.params.is_empty() || signature.generics.where_clause.is_some() {
        errors.at(
            signature.generics.span(),
            format_args!("a {kind} function cannot be generic: {generic_hint}"),
        );
    }
    if let Some(variadic) = &signature.variadic {
        errors.at(
            variadic.span(),
            format_args!("a {kind} function cannot be variadic"),
        );
    }
    let mut params = Vec::new();
    for input in &signature.inputs {
        match input {
            FnArg::Typed(typed) => params.push(&*typed.ty),
            FnArg::Receiver(receiver) => errors.at(
                receiver.span(),
                format_args!("a {kind} is a free function: remove `self`"),
            ),
        }
    }
    params
}

/// The span of the whole return type, or of the function name without one.
pub fn output_span(function: &ItemFn) -> Span {
    match &function.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => function.sig.ident.span(),
    }
}

/// The registered name of a `kind`: `name = "..."`, else the function's; checked.
pub fn name(
    given: Option<&LitStr>,
    signature: &Signature,
    kind: &str,
    errors: &mut Errors,
) -> String {
    let (name, span) = match given {
        Some(lit) => (lit.value(), lit.span()),
        None => (signature.ident.to_string(), signature.ident.span()),
    };
    if let Err(message) = names::check_name(kind, &name) {
        errors.at(span, message);
    }
    name
}
