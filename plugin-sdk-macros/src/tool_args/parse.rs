//! The derive input in our own terms: shape, fields, and the serde and schemars
//! attributes that matter to strict mode, each with its span.

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::{Attribute, Data, DeriveInput, Fields, Meta, Token, Type};

use crate::attr::{parse_args, sdk_path, Once};
use crate::errors::Errors;
use crate::symbol::{ACTION, CRATE, STRICT, TOOL_ARGS, TOOL_ARGS_KEYS};

pub struct Input<'a> {
    pub ast: &'a DeriveInput,
    pub sdk: syn::Path,
    /// `false` with `#[tool_args(strict = false)]`.
    pub strict: bool,
    /// `#[tool_args(action)]`: fit for a staged action's arguments, with the span of
    /// `action`.
    pub action: Option<Span>,
    /// Where `strict = false` was written, if it was.
    pub strict_span: Option<Span>,
    pub shape: Shape<'a>,
    /// serde and schemars keys on the container.
    pub keys: Vec<Key>,
}

pub enum Shape<'a> {
    /// `struct S { a: A }`: the only shape that can be a tool's arguments.
    Named(Vec<Field<'a>>),
    /// `struct S(A)`: nested only, rendered as `A`.
    Newtype(Field<'a>),
    /// A tuple struct of several fields, a unit struct or a union.
    Unsupported {
        span: Span,
        what: &'static str,
    },
    Enum(Vec<Variant<'a>>),
}

pub struct Field<'a> {
    /// `None` in a tuple struct or variant.
    pub ident: Option<&'a syn::Ident>,
    pub ty: &'a Type,
    pub keys: Vec<Key>,
}

pub struct Variant<'a> {
    pub ident: &'a syn::Ident,
    /// Whether the fields are named, unnamed or none, as written.
    pub style: &'a Fields,
    pub fields: Vec<Field<'a>>,
    pub keys: Vec<Key>,
}

impl Variant<'_> {
    /// Several unnamed fields: a positional array.
    pub fn is_tuple(&self) -> bool {
        matches!(self.style, Fields::Unnamed(fields) if fields.unnamed.len() > 1)
    }
}

/// One key of a `#[serde(...)]` or `#[schemars(...)]` attribute: `serde(default)`.
pub struct Key {
    pub tool: &'static str,
    pub name: String,
    pub span: Span,
    /// The whole key as written, `rename = "to"`, for the checks that read its value.
    pub meta: Meta,
}

impl<'a> Input<'a> {
    pub fn from_ast(ast: &'a DeriveInput, errors: &mut Errors) -> Self {
        let ToolArgsAttrs {
            krate,
            strict,
            action,
        } = tool_args_attrs(&ast.attrs, errors);
        let (strict, strict_span) = match strict {
            Some((strict, span)) => (strict, Some(span)),
            None => (true, None),
        };
        let shape = match &ast.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Shape::Named(fields(&named.named, errors)),
                Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                    Shape::Newtype(fields(&unnamed.unnamed, errors).remove(0))
                }
                Fields::Unnamed(_) => Shape::Unsupported {
                    span: ast.ident.span(),
                    what: "a tuple struct renders as a positional array",
                },
                Fields::Unit => Shape::Unsupported {
                    span: ast.ident.span(),
                    what: "a unit struct renders as `null`",
                },
            },
            Data::Enum(data) => Shape::Enum(
                data.variants
                    .iter()
                    .map(|variant| Variant {
                        ident: &variant.ident,
                        style: &variant.fields,
                        fields: fields(&variant.fields, errors),
                        keys: keys(&variant.attrs, errors),
                    })
                    .collect(),
            ),
            Data::Union(data) => Shape::Unsupported {
                span: data.union_token.span,
                what: "a union has no schema",
            },
        };
        Self {
            ast,
            sdk: sdk_path(krate),
            strict,
            action,
            strict_span,
            shape,
            keys: keys(&ast.attrs, errors),
        }
    }
}

fn fields<'a>(
    fields: impl IntoIterator<Item = &'a syn::Field>,
    errors: &mut Errors,
) -> Vec<Field<'a>> {
    fields
        .into_iter()
        .map(|field| Field {
            ident: field.ident.as_ref(),
            ty: &field.ty,
            keys: keys(&field.attrs, errors),
        })
        .collect()
}

/// The keys of every `#[serde(...)]` and `#[schemars(...)]` attribute.
fn keys(attrs: &[Attribute], errors: &mut Errors) -> Vec<Key> {
    let mut keys = Vec::new();
    for attr in attrs {
        let tool = if attr.path().is_ident("serde") {
            "serde"
        } else if attr.path().is_ident("schemars") {
            "schemars"
        } else {
            continue;
        };
        match attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
            Ok(metas) => keys.extend(metas.iter().filter_map(|meta| {
                let ident = meta.path().get_ident()?;
                Some(Key {
                    tool,
                    name: ident.to_string(),
                    span: ident.span(),
                    meta: meta.clone(),
                })
            })),
            Err(error) => errors.push(error),
        }
    }
    keys
}

struct ToolArgsAttrs {
    krate: Option<syn::Path>,
    strict: Option<(bool, Span)>,
    action: Option<Span>,
}

/// `#[tool_args(crate = path, strict = false, action)]`.
fn tool_args_attrs(attrs: &[Attribute], errors: &mut Errors) -> ToolArgsAttrs {
    let mut krate = Once::default();
    let mut strict = Once::default();
    let mut action = Once::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident(TOOL_ARGS)) {
        let args = match attr.parse_args_with(parse_args) {
            Ok(args) => args,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        for arg in args {
            let key = arg.key.clone();
            match &*key.to_string() {
                CRATE => krate.set(&key, arg.path(errors), errors),
                STRICT => strict.set(&key, arg.flag(errors), errors),
                ACTION => action.set(&key, arg.flag(errors), errors),
                _ => arg.unknown(TOOL_ARGS_KEYS, errors),
            };
        }
    }
    ToolArgsAttrs {
        krate: krate.get(),
        strict: strict.get(),
        action: action
            .get()
            .and_then(|(action, span)| action.then_some(span)),
    }
}
