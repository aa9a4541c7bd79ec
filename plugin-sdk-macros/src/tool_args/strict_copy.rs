//! `StrictDeserialize` for a strict type: a private copy of the type that serde derives
//! with `deny_unknown_fields` and every field read through `StrictDeserialize` (so every
//! key is required, an `Option`'s too), then its fields moved into the author's type.
//!
//! The copy keeps the serde keys that decide the JSON's shape (renames, aliases, enum
//! tagging) and drops the rest: the ones strict mode forbids are errors already, and
//! `crate`, `bound` and `deny_unknown_fields` are set here.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Fields, Ident, Meta};

use super::parse::{Field, Input, Key, Shape};

/// The serde keys the copy keeps, on the container, a field and a variant.
const CONTAINER_KEYS: &[&str] = &[
    "rename",
    "rename_all",
    "rename_all_fields",
    "tag",
    "content",
    "untagged",
    "expecting",
];
const FIELD_KEYS: &[&str] = &["rename", "alias"];
const VARIANT_KEYS: &[&str] = &["rename", "alias", "rename_all", "other", "untagged"];

/// The copy and the `StrictDeserialize` impl, or nothing for a shape the macro refuses.
pub fn impls(input: &Input) -> TokenStream {
    let sdk = &input.sdk;
    let private = quote!(#sdk::__private);
    let ident = &input.ast.ident;
    let copy = Ident::new("__StrictCopy", Span::call_site());

    let mut generics = input.ast.generics.clone();
    for param in generics.type_params_mut() {
        param
            .bounds
            .push(syn::parse_quote!(#private::StrictDeserialize));
    }
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    let turbofish = type_generics.as_turbofish();
    // serde's own bounds would ask `Deserialize` of each parameter; the fields' readers
    // ask `StrictDeserialize`.
    let bound = input
        .ast
        .generics
        .type_params()
        .map(|param| format!("{}: {}::StrictDeserialize", param.ident, private))
        .collect::<Vec<_>>()
        .join(", ");

    let mut readers = Vec::new();
    let mut reader = |ty: &syn::Type| {
        let name = format_ident!("__field_{}", readers.len());
        readers.push(quote! {
            fn #name<'de, __D: #private::serde::Deserializer<'de>>(
                __deserializer: __D,
            ) -> ::core::result::Result<#ty, __D::Error> {
                // Method resolution picks one of the two; the other goes unused.
                #[allow(unused_imports)]
                use #private::{NotStrict as _, ViaStrict as _};
                (&#private::Probe::<#ty>::NEW).deserialize_field(__deserializer)
            }
        });
        let path = quote!(#copy #turbofish :: #name).to_string();
        quote!(#[serde(deserialize_with = #path)])
    };

    let (definition, conversion) = match &input.shape {
        Shape::Named(fields) => {
            let names = fields.iter().filter_map(|field| field.ident).collect();
            let fields = copy_fields(fields, &mut reader);
            let (pattern, built) = convert(fields.len(), Some(names));
            (
                quote!(struct #copy #generics #where_clause { #(#fields),* }),
                quote! {
                    let #copy #pattern = __copy;
                    ::core::result::Result::Ok(Self #built)
                },
            )
        }
        Shape::Newtype(field) => {
            let fields = copy_fields(std::slice::from_ref(field), &mut reader);
            (
                quote!(struct #copy #generics (#(#fields),*) #where_clause;),
                quote! {
                    let #copy(__field0) = __copy;
                    ::core::result::Result::Ok(Self(__field0))
                },
            )
        }
        Shape::Enum(variants) => {
            let mut definitions = Vec::new();
            let mut arms = Vec::new();
            for variant in variants {
                let name = variant.ident;
                let attrs = kept(&variant.keys, VARIANT_KEYS);
                let fields = copy_fields(&variant.fields, &mut reader);
                let names = match variant.style {
                    Fields::Named(_) => {
                        Some(variant.fields.iter().filter_map(|f| f.ident).collect())
                    }
                    _ => None,
                };
                let (pattern, built) = match variant.style {
                    Fields::Unit => (TokenStream::new(), TokenStream::new()),
                    _ => convert(fields.len(), names),
                };
                definitions.push(match variant.style {
                    Fields::Named(_) => quote!(#(#attrs)* #name { #(#fields),* }),
                    Fields::Unnamed(_) => quote!(#(#attrs)* #name (#(#fields),*)),
                    Fields::Unit => quote!(#(#attrs)* #name),
                });
                arms.push(quote!(#copy::#name #pattern => Self::#name #built));
            }
            (
                quote!(enum #copy #generics #where_clause { #(#definitions),* }),
                quote!(::core::result::Result::Ok(match __copy { #(#arms),* })),
            )
        }
        Shape::Unsupported { .. } => return TokenStream::new(),
    };

    let container = kept(&input.keys, CONTAINER_KEYS);
    // serde buffers an internally tagged or untagged enum before reading it.
    let buffered = match &input.shape {
        Shape::Enum(variants) => {
            has_key(&input.keys, &["tag", "untagged"])
                || variants
                    .iter()
                    .any(|variant| has_key(&variant.keys, &["untagged"]))
        }
        _ => false,
    };
    let read = if buffered {
        quote!(#private::deserialize_buffered::<__D, #copy #type_generics>(__deserializer)?)
    } else {
        quote!(<#copy #type_generics as #private::serde::Deserialize>::deserialize(__deserializer)?)
    };
    let crate_path = quote!(#private::serde).to_string();
    quote! {
        const _: () = {
            #[derive(#private::serde::Deserialize)]
            #[serde(crate = #crate_path, deny_unknown_fields, bound = #bound)]
            #(#container)*
            #definition

            impl #impl_generics #copy #type_generics #where_clause {
                #(#readers)*
            }

            impl #impl_generics #private::StrictDeserialize for #ident #type_generics #where_clause {
                fn deserialize_strict<'de, __D: #private::serde::Deserializer<'de>>(
                    __deserializer: __D,
                ) -> ::core::result::Result<Self, __D::Error> {
                    let __copy = #read;
                    #conversion
                }
            }
        };
    }
}

/// The fields of the copy: the kept serde keys, the reader, the name and the type.
fn copy_fields(
    fields: &[Field],
    reader: &mut impl FnMut(&syn::Type) -> TokenStream,
) -> Vec<TokenStream> {
    fields
        .iter()
        .map(|field| {
            let attrs = kept(&field.keys, FIELD_KEYS);
            let read = reader(field.ty);
            let ty = field.ty;
            match field.ident {
                Some(ident) => quote!(#(#attrs)* #read #ident: #ty),
                None => quote!(#(#attrs)* #read #ty),
            }
        })
        .collect()
}

/// The pattern that takes `count` fields out of the copy, and the expression that puts
/// them into the author's type: `{ a: __field0 }` with names, `(__field0)` without.
/// Bindings never take the fields' own names, which a constant in scope could shadow.
fn convert(count: usize, names: Option<Vec<&Ident>>) -> (TokenStream, TokenStream) {
    let bindings: Vec<Ident> = (0..count).map(|i| format_ident!("__field{i}")).collect();
    match names {
        Some(names) => {
            let moved = quote!({ #(#names: #bindings),* });
            (moved.clone(), moved)
        }
        None => {
            let moved = quote!((#(#bindings),*));
            (moved.clone(), moved)
        }
    }
}

/// Whether `keys` has a serde key among `names`.
fn has_key(keys: &[Key], names: &[&str]) -> bool {
    keys.iter()
        .any(|key| key.tool == "serde" && names.contains(&key.name.as_str()))
}

/// The serde keys among `keys` that the copy keeps, each as its own attribute.
fn kept(keys: &[Key], names: &[&str]) -> Vec<TokenStream> {
    keys.iter()
        .filter(|key| key.tool == "serde" && names.contains(&key.name.as_str()))
        .map(|key| {
            let meta: &Meta = &key.meta;
            quote!(#[serde(#meta)])
        })
        .collect()
}
