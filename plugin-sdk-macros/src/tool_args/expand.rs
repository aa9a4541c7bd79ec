//! The impls: `StrictSchema` with a bound per field at the field's own type, and for a
//! struct with named fields, `ToolArgs` and the `ToolParam` that deserializes it.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{parse_quote, Generics};

use super::parse::{Field, Input, Shape};

pub fn impls(input: &Input) -> TokenStream {
    let sdk = &input.sdk;
    let private = quote!(#sdk::__private);
    let ident = &input.ast.ident;
    let bounded = bounded_generics(&input.ast.generics, &parse_quote!(#private::StrictSchema));
    let (impl_generics, type_generics, where_clause) = bounded.split_for_impl();

    let param = if matches!(input.shape, Shape::Named(_)) {
        tool_param(input)
    } else {
        TokenStream::new()
    };
    if !input.strict {
        return param;
    }
    let action = action_impls(input);

    let field_checks = fields(&input.shape)
        .filter(|field| !super::check::refuses_field(field))
        .map(|field| {
            let checked = innermost(field.ty);
            let assert = crate::tool::qualified(checked, &quote!(#private::StrictSchema), "ASSERT");
            quote!(let () = #assert;)
        });
    let arguments = matches!(input.shape, Shape::Named(_)).then(|| {
        let mut generics = bounded.clone();
        generics
            .make_where_clause()
            .predicates
            .push(parse_quote!(#ident #type_generics: #private::DeserializeOwned));
        let where_clause = &generics.where_clause;
        quote!(impl #impl_generics #private::ToolArgs for #ident #type_generics #where_clause {})
    });
    quote! {
        // Left out of rustc's "the following other types implement" list.
        #[diagnostic::do_not_recommend]
        impl #impl_generics #private::StrictSchema for #ident #type_generics #where_clause {}

        const _: () = {
            #[allow(dead_code)]
            fn __assert_fields #impl_generics () #where_clause {
                #(#field_checks)*
            }
        };

        #arguments
        #param
        #action
    }
}

/// With `#[tool_args(action)]`: `ActionField` with a bound per field at the field's own
/// type, and for a struct with named fields, `ActionParam`. Without it, an enum whose
/// variants have no fields is an `ActionField` too: it holds no text.
fn action_impls(input: &Input) -> TokenStream {
    let sdk = &input.sdk;
    let private = quote!(#sdk::__private);
    let ident = &input.ast.ident;
    let bounded = bounded_generics(&input.ast.generics, &parse_quote!(#private::ActionField));
    let (impl_generics, type_generics, where_clause) = bounded.split_for_impl();
    let field_impl = quote! {
        #[diagnostic::do_not_recommend]
        impl #impl_generics #private::ActionField for #ident #type_generics #where_clause {}
    };
    if input.action.is_none() {
        let fieldless = matches!(&input.shape, Shape::Enum(variants)
            if variants.iter().all(|variant| variant.fields.is_empty()));
        return if fieldless {
            field_impl
        } else {
            TokenStream::new()
        };
    }
    let field_checks = fields(&input.shape)
        .filter(|field| !super::check::refuses_field(field))
        .map(|field| {
            let checked = innermost(field.ty);
            let assert = crate::tool::qualified(checked, &quote!(#private::ActionField), "ASSERT");
            quote!(let () = #assert;)
        });
    let param = matches!(input.shape, Shape::Named(_)).then(|| {
        quote! {
            #[diagnostic::do_not_recommend]
            impl #impl_generics #private::ActionParam for #ident #type_generics #where_clause {}
        }
    });
    // A type without generics checks its fields in a constant, which rustc evaluates
    // when it checks the crate: a `Note<MAX>` out of bounds is then an error of `cargo
    // check` (and of an editor) too, not only of a build. A generic one can only check
    // them in a function, evaluated where it is built.
    let checks = if input.ast.generics.params.is_empty() {
        quote!(const _: () = { #(#field_checks)* };)
    } else {
        quote! {
            const _: () = {
                #[allow(dead_code)]
                fn __assert_action_fields #impl_generics () #where_clause {
                    #(#field_checks)*
                }
            };
        }
    };
    quote! {
        #field_impl
        #param
        #checks
    }
}

/// `ToolParam` for the arguments struct: deserialized from the model's JSON, as its
/// strict schema states when it is strict.
fn tool_param(input: &Input) -> TokenStream {
    let sdk = &input.sdk;
    let private = quote!(#sdk::__private);
    let ident = &input.ast.ident;
    let strict = input.strict;
    let mut generics = input.ast.generics.clone();
    for param in generics.type_params_mut() {
        if strict {
            param.bounds.push(parse_quote!(#private::StrictSchema));
        } else {
            param.bounds.push(parse_quote!(#private::JsonSchema));
        }
    }
    let (_, type_generics, _) = input.ast.generics.split_for_impl();
    let deserialize = if strict {
        quote!(#private::deserialize_strict_arguments)
    } else {
        generics
            .make_where_clause()
            .predicates
            .push(parse_quote!(#ident #type_generics: #private::DeserializeOwned));
        quote!(#private::deserialize_arguments)
    };
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    quote! {
        impl #impl_generics #private::ToolParam for #ident #type_generics #where_clause {
            const ARGUMENTS: bool = true;
            const STRICT: bool = #strict;

            fn input_schema() -> ::core::option::Option<#private::Schema> {
                ::core::option::Option::Some(#private::input_schema_for::<Self>(#strict))
            }

            fn check_arguments(arguments: &str) -> ::core::result::Result<(), #private::ToolError> {
                #deserialize::<Self>(arguments).map(::core::mem::drop)
            }

            type Extracted<'__a> = Self;

            fn extract(input: &#private::CallInput<'_>) -> ::core::result::Result<Self, #private::ToolError> {
                #deserialize(input.arguments())
            }
        }
    }
}

fn fields<'a>(shape: &'a Shape) -> Box<dyn Iterator<Item = &'a Field<'a>> + 'a> {
    match shape {
        Shape::Named(fields) => Box::new(fields.iter()),
        Shape::Newtype(field) => Box::new(std::iter::once(field)),
        Shape::Enum(variants) => Box::new(variants.iter().flat_map(|variant| &variant.fields)),
        Shape::Unsupported { .. } => Box::new(std::iter::empty()),
    }
}

/// The type's generics with `bound` on every type parameter, as serde does.
fn bounded_generics(generics: &Generics, bound: &syn::TypeParamBound) -> Generics {
    let mut generics = generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(bound.clone());
    }
    generics
}

/// The type inside the standard containers a strict schema allows (`Option`, `Vec`,
/// `VecDeque`, `Box`, by their usual paths): a violation inside them is reported as the
/// type that causes it (`Value`), not as `Option<Vec<Value>>`. The containers' impls are
/// `do_not_recommend`, so that rustc lists no implementors, which is also why it would
/// not look inside them. A user's own type named like one of them is checked at the
/// engine's start-up (the strict re-check) rather than here.
fn innermost(ty: &syn::Type) -> &syn::Type {
    const CONTAINERS: &[&str] = &["Option", "Vec", "VecDeque", "Box"];
    const ROOTS: &[&str] = &["std", "alloc", "core"];
    let syn::Type::Path(path) = ty else {
        return ty;
    };
    let segments = &path.path.segments;
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        return ty;
    };
    let standard = path.qself.is_none()
        && (segments.len() == 1 || ROOTS.iter().any(|root| first.ident == root));
    if !standard || !CONTAINERS.iter().any(|name| last.ident == name) {
        return ty;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(generics) if generics.args.len() == 1 => {
            match &generics.args[0] {
                syn::GenericArgument::Type(inner) => innermost(inner),
                _ => ty,
            }
        }
        _ => ty,
    }
}
