//! What every registered function shares, tool or hook: one entry path (parse the
//! attribute, check the function, expand, or fall back to the function as written beside
//! the errors), and the checks of its shape, name and texts.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, LitStr, ReturnType, Signature, Type};

use crate::attr::{parse_args, Arg};
use crate::doc::doc_comment;
use crate::errors::{fallback, Errors};
use crate::localized::Localized;
use crate::names;

/// One kind of registered function: `#[define_tool]` or `#[define_hook]`.
pub trait Registered {
    /// The error when the attribute is not on a function.
    const NOT_A_FUNCTION: &'static str;
    /// The checked item, borrowing the function.
    type Checked<'a>;
    /// Reads the attribute's arguments and checks the function, recording every
    /// mistake; `None` only with an error recorded.
    fn check<'a>(
        args: Vec<Arg>,
        function: &'a ItemFn,
        errors: &mut Errors,
    ) -> Option<Self::Checked<'a>>;
    /// The registration of a checked item.
    fn expand(checked: &Self::Checked<'_>) -> TokenStream;
}

/// The entry of `#[define_tool]` and `#[define_hook]`: on any error, the function as
/// written beside the errors, so one mistake gives one error.
pub fn entry<R: Registered>(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            return fallback(
                item.clone(),
                syn::Error::new_spanned(&item, R::NOT_A_FUNCTION),
            )
        }
    };
    let args = match syn::parse::Parser::parse2(parse_args, attr) {
        Ok(args) => args,
        Err(error) => return fallback(function.into_token_stream(), error),
    };
    let mut errors = Errors::default();
    let checked = R::check(args, &function, &mut errors);
    // A binding, not a tail expression: the tuple borrows `function`, which a tail
    // expression's temporaries would outlive.
    #[allow(clippy::let_and_return)]
    let expanded = match (checked, errors.finish()) {
        (Some(checked), Ok(())) => R::expand(&checked),
        (_, Err(error)) => fallback(function.to_token_stream(), error),
        // `check` records an error whenever it answers `None`.
        (None, Ok(())) => function.to_token_stream(),
    };
    expanded
}

/// What a tool and a hook check alike: the shape, the name, the doc comment and the
/// summary.
pub struct Common<'a> {
    pub params: Vec<&'a Type>,
    pub name: String,
    pub name_span: Span,
    pub description: String,
}

/// Checks what `Common` holds. `generic_hint` says what to write instead of generics,
/// `reader` who reads the doc comment.
pub fn common<'a>(
    function: &'a ItemFn,
    kind: &str,
    given_name: Option<&LitStr>,
    summary: Option<&Localized>,
    hints: (&str, &str),
    errors: &mut Errors,
) -> Common<'a> {
    let (generic_hint, reader) = hints;
    let signature = &function.sig;
    let params = params(signature, kind, generic_hint, errors);
    let (name, name_span) = name(given_name, signature, kind, errors);
    let description = doc_comment(&function.attrs).unwrap_or_else(|| {
        errors.at(signature.ident.span(), format_args!("a {kind} needs a doc comment: it {reader}; add `/// What the {kind} does, in English.` above the function"));
        String::new()
    });
    if let Some(summary) = summary {
        summary.check(errors);
    }
    Common {
        params,
        name,
        name_span,
        description,
    }
}

/// The parameter types of `signature`, after reporting what a `kind` cannot be: generic
/// (`generic_hint` says what to write instead), variadic, a method.
fn params<'a>(
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
            FnArg::Typed(typed) => {
                check_reference(&typed.ty, kind, errors);
                params.push(&*typed.ty)
            }
            FnArg::Receiver(receiver) => errors.at(
                receiver.span(),
                format_args!("a {kind} is a free function: remove `self`"),
            ),
        }
    }
    params
}

/// The extractors a tool or a hook takes by value, by their last path segment.
const BY_VALUE: &[&str] = &[
    "Knowledge",
    "Shared",
    "Subscriber",
    "Conversation",
    "Option",
];

/// A reference no extractor is: `&mut` anything (every extractor is shared: `&State`
/// writes through `&self`), or `&` before an extractor taken by value. Said here, with
/// the fix, rather than by rustc's suggestion to borrow once more.
fn check_reference(ty: &Type, kind: &str, errors: &mut Errors) {
    let Type::Reference(reference) = ty else {
        return;
    };
    let by_value = match &*reference.elem {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map(|segment| segment.ident.to_string())
            .filter(|name| BY_VALUE.contains(&name.as_str())),
        _ => None,
    };
    let written = if reference.mutability.is_some() {
        "&mut"
    } else {
        "&"
    };
    if let Some(name) = by_value {
        errors.push(syn::Error::new_spanned(
            ty,
            format_args!(
                "a {kind} takes `{name}` by value, not by reference: remove the `{written}`"
            ),
        ));
    } else if reference.mutability.is_some() {
        errors.push(syn::Error::new_spanned(
            ty,
            format_args!("a {kind} takes no `&mut` parameter: every extractor is shared (`&State` writes through `&self`); write `&` instead of `&mut`"),
        ));
    }
}

/// The span of the whole return type, or of the function name without one.
pub fn output_span(function: &ItemFn) -> Span {
    match &function.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => function.sig.ident.span(),
    }
}

/// The registered name of a `kind`: `name = "..."`, else the function's; checked.
fn name(
    given: Option<&LitStr>,
    signature: &Signature,
    kind: &str,
    errors: &mut Errors,
) -> (String, Span) {
    let (name, span) = match given {
        Some(lit) => (lit.value(), lit.span()),
        None => (signature.ident.to_string(), signature.ident.span()),
    };
    if let Err(message) = names::check_name(kind, &name) {
        errors.at(span, message);
    }
    (name, span)
}
