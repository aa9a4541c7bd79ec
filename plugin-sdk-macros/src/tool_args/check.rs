//! The serde and schemars attributes strict mode forbids, and the shapes it cannot
//! express. Field types are checked by rustc, through the `StrictSchema` bounds that
//! `expand` emits at each field.

use super::parse::{Field, Input, Key, Shape};
use crate::errors::Errors;

/// Where an attribute stands, since what is allowed differs.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Container,
    Field,
    Variant,
}

/// Forbidden keys: (tool, key, where it is forbidden, why and what to write instead).
const FORBIDDEN: &[(&str, &str, &[Place], &str)] = &[
    ("serde", "default", &[Place::Container, Place::Field], "it makes a field omittable, which strict mode does not allow: make it `Option<T>` (nullable, always sent) and apply the default in the tool body"),
    ("serde", "skip", &[Place::Field, Place::Variant], "a skipped field is not something the model sends: remove it from the arguments and compute it in the tool body"),
    ("serde", "skip_deserializing", &[Place::Field, Place::Variant], "a skipped field is not something the model sends: remove it from the arguments and compute it in the tool body"),
    ("serde", "deserialize_with", &[Place::Field, Place::Variant], "a custom deserializer transforms the value, so the schema would not describe what the model sends: take the plain type and convert it in the tool body"),
    ("serde", "with", &[Place::Field, Place::Variant], "it transforms the value, so the schema would not describe what the model sends: take the plain type and convert it in the tool body"),
    ("serde", "from", &[Place::Container], "it converts after parsing, so the schema would describe another type: derive on the type the model sends and convert in the tool body"),
    ("serde", "try_from", &[Place::Container], "it converts after parsing, so the schema would describe another type: derive on the type the model sends and validate in the tool body"),
    ("serde", "transparent", &[Place::Container], "it hides the type behind its field: use the field's type directly"),
    ("serde", "alias", &[Place::Field, Place::Variant], "the schema lists only the canonical name, so the model would be told one key and another would be accepted: keep one name, with `#[serde(rename = \"...\")]` if the JSON key differs from the Rust name"),
    ("serde", "other", &[Place::Variant], "it accepts any unknown tag, which the schema does not list: name every variant the model may send, and let an unknown one be refused"),
    ("serde", "flatten", &[Place::Field], "it merges another type's properties into this object (and a flattened map opens it): nest it as a named field, or write its fields out"),
    ("schemars", "with", &[Place::Container, Place::Field, Place::Variant], "it replaces the schema without the strict checks: let the type give its own schema"),
    ("schemars", "schema_with", &[Place::Container, Place::Field, Place::Variant], "it replaces the schema without the strict checks: let the type give its own schema"),
    ("schemars", "default", &[Place::Container, Place::Field], "it makes a field omittable, which strict mode does not allow: make it `Option<T>` and apply the default in the tool body"),
];

pub fn rules(input: &Input, errors: &mut Errors) {
    if let Some(action) = input.action {
        action_rules(input, action, errors);
    }
    if !input.strict {
        return;
    }
    check_keys(&input.keys, Place::Container, errors);
    match &input.shape {
        Shape::Named(fields) => check_fields(fields, errors),
        Shape::Newtype(field) => check_fields(std::slice::from_ref(field), errors),
        Shape::Unsupported { span, what } => errors.at(
            *span,
            format_args!("{what}, which strict mode does not accept: tool arguments are a struct with named fields, `struct Name {{ field: Type }}`"),
        ),
        Shape::Enum(variants) => {
            for variant in variants {
                check_keys(&variant.keys, Place::Variant, errors);
                check_fields(&variant.fields, errors);
                if variant.is_tuple() {
                    errors.at(
                        variant.ident.span(),
                        "a tuple variant renders as a positional array, which strict mode does not accept: give it named fields, `Variant { field: Type }`",
                    );
                }
            }
        }
    }
}

fn check_fields(fields: &[Field], errors: &mut Errors) {
    for field in fields {
        check_field_keys(field, errors);
    }
}

/// A field's keys, where `default` on a field that is already an `Option` has its own
/// fix: the attribute goes, the type stays.
fn check_field_keys(field: &Field, errors: &mut Errors) {
    for key in &field.keys {
        if key.name == "default" && is_option(field.ty) && forbidden(key, Place::Field).is_some() {
            errors.at(
                key.span,
                format_args!("`#[{}(default)]` is not allowed in tool arguments, and this field needs none: it is an `Option`, which strict mode lists as required and the model sends as `null` when it has no value; remove `default`", key.tool),
            );
        } else {
            check_key(key, Place::Field, errors);
        }
    }
}

/// `Option<..>` by its last path segment, as written.
fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|segment| segment.ident == "Option"))
}

fn check_keys(keys: &[Key], place: Place, errors: &mut Errors) {
    for key in keys {
        check_key(key, place, errors);
    }
}

/// Whether one of the field's keys is refused: its type then goes unchecked, so that the
/// key's error is the one reported (a flattened map is the flatten's mistake).
pub fn refuses_field(field: &Field) -> bool {
    field
        .keys
        .iter()
        .any(|key| forbidden(key, Place::Field).is_some())
}

/// The rule that forbids `key` at `place`: (why, what to write instead).
fn forbidden(key: &Key, place: Place) -> Option<&'static str> {
    FORBIDDEN
        .iter()
        .find(|(tool, name, places, _)| {
            *tool == key.tool && *name == key.name && places.contains(&place)
        })
        .map(|(.., why)| *why)
}

fn check_key(key: &Key, place: Place, errors: &mut Errors) {
    if let Some(why) = forbidden(key, place) {
        let (tool, name) = (key.tool, &key.name);
        errors.at(
            key.span,
            format_args!("`#[{tool}({name})]` is not allowed in tool arguments: {why}"),
        );
    }
}

/// What `#[tool_args(action)]` adds: strict, and no field that carries the subscriber.
/// (Field types are checked by rustc, through the `ActionField` bounds `expand` emits.)
fn action_rules(input: &Input, action: proc_macro2::Span, errors: &mut Errors) {
    if !input.strict {
        errors.at(
            input.strict_span.unwrap_or(action),
            "an action's arguments are strict: remove `strict = false`",
        );
    }
    let fields: Vec<&Field> = match &input.shape {
        Shape::Named(fields) => fields.iter().collect(),
        Shape::Newtype(field) => vec![field],
        Shape::Enum(variants) => variants.iter().flat_map(|v| &v.fields).collect(),
        Shape::Unsupported { .. } => Vec::new(),
    };
    let names_subscriber = |name: &str| name.to_ascii_lowercase().contains("subscriber");
    for field in fields {
        // The key the model writes: the field's name, or its `#[serde(rename = "...")]`.
        let renamed = field.keys.iter().find_map(|key| match &key.meta {
            syn::Meta::NameValue(pair) if key.name == "rename" => match &pair.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(name),
                    ..
                }) => Some((name.value(), name.span())),
                _ => None,
            },
            _ => None,
        });
        let written = field.ident.map(|ident| (ident.to_string(), ident.span()));
        for (name, span) in written.into_iter().chain(renamed) {
            if names_subscriber(&name) {
                errors.at(
                    span,
                    format_args!("the subscriber comes from the turn, never from the model: remove `{name}` and take `subscriber: Subscriber` as a parameter of the action"),
                );
            }
        }
    }
}
