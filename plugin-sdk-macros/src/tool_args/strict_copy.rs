//! `StrictDeserialize` for a strict type: a private copy of the type that serde derives
//! with `deny_unknown_fields` and every field read through `StrictDeserialize` (so every
//! key is required, an `Option`'s too), then its fields moved into the author's type.
//!
//! The copy keeps the serde keys that decide the JSON's shape (renames, enum tagging) and
//! drops the rest: the ones strict mode forbids are errors already, and `crate`, `bound`
//! and `deny_unknown_fields` are set here. It bears the author's type name, in a scope of
//! its own, so that serde's errors name the author's type ("expected struct Address").

use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use syn::{Fields, GenericParam, Ident, Meta};

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
const FIELD_KEYS: &[&str] = &["rename"];
const VARIANT_KEYS: &[&str] = &["rename", "rename_all", "untagged"];

/// The copy and the `StrictDeserialize` impl, or nothing for a shape the macro refuses.
pub fn impls(input: &Input) -> TokenStream {
    let sdk = &input.sdk;
    let private = quote!(#sdk::__private);
    let ident = &input.ast.ident;
    // The copy shadows the author's type, which the impl and the copy's own fields (of a
    // recursive type) name through this alias.
    let author = format_ident!("__StrictAuthorType");
    let copy = ident;

    let mut generics = input.ast.generics.clone();
    for param in generics.type_params_mut() {
        param
            .bounds
            .push(syn::parse_quote!(#private::StrictDeserialize));
    }
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    let turbofish = type_generics.as_turbofish();
    let alias_params = input.ast.generics.params.iter().map(|param| match param {
        GenericParam::Type(param) => param.ident.to_token_stream(),
        GenericParam::Lifetime(param) => param.lifetime.to_token_stream(),
        GenericParam::Const(param) => {
            let (name, ty) = (&param.ident, &param.ty);
            quote!(const #name: #ty)
        }
    });
    let alias = quote!(type #author <#(#alias_params),*> = #ident #type_generics;);
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
    let mut reader = |ty: &TokenStream| {
        let name = format_ident!("__field_{}", readers.len());
        readers.push(quote! {
            fn #name<'de, __D: #private::serde::Deserializer<'de>>(
                __deserializer: __D,
            ) -> ::core::result::Result<#ty, __D::Error> {
                #[allow(unused_imports)]
                use #private::{NotStrict as _, ViaStrict as _};
                (&#private::Probe::<#ty>::NEW).deserialize_field(__deserializer)
            }
        });
        let path = quote!(#copy #turbofish :: #name).to_string();
        quote!(#[serde(deserialize_with = #path)])
    };
    let mut copy_fields = |fields: &[Field]| -> Vec<TokenStream> {
        fields
            .iter()
            .map(|field| {
                let attrs = kept(&field.keys, FIELD_KEYS);
                let ty = naming_author(field.ty.to_token_stream(), ident, &author);
                let read = reader(&ty);
                match field.ident {
                    Some(ident) => quote!(#(#attrs)* #read #ident: #ty),
                    None => quote!(#(#attrs)* #read #ty),
                }
            })
            .collect()
    };

    // An internally tagged enum's copy is externally tagged, and read from its value
    // with the tag made the variant's key (see `deserialize_buffered`): serde would read
    // it through a buffer of its own, where no error path is tracked, and would not look
    // at the keys beside a unit variant's tag. A unit variant is an empty struct variant,
    // which refuses them.
    let internal_tag = match has_key(&input.keys, &["content"]) {
        true => None,
        false => input.keys.iter().find_map(|key| match &key.meta {
            Meta::NameValue(tag) if key.tool == "serde" && key.name == "tag" => {
                Some(tag.value.clone())
            }
            _ => None,
        }),
    };
    let internally_tagged = internal_tag.is_some();
    let (definition, conversion) = match &input.shape {
        Shape::Named(fields) => {
            let names = fields.iter().filter_map(|field| field.ident);
            let fields = copy_fields(fields);
            let moved = moved(fields.len(), Some(names));
            (
                quote!(struct #copy #generics #where_clause { #(#fields),* }),
                quote! {
                    let #copy #moved = __copy;
                    ::core::result::Result::Ok(Self #moved)
                },
            )
        }
        Shape::Newtype(field) => {
            let fields = copy_fields(std::slice::from_ref(field));
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
                let fields = copy_fields(&variant.fields);
                let (definition, arm) = match variant.style {
                    Fields::Named(_) => {
                        let names = variant.fields.iter().filter_map(|field| field.ident);
                        let moved = moved(fields.len(), Some(names));
                        (
                            quote!(#name { #(#fields),* }),
                            quote!(#copy::#name #moved => Self::#name #moved),
                        )
                    }
                    Fields::Unnamed(_) => {
                        let moved = moved(fields.len(), None::<std::iter::Empty<&Ident>>);
                        (
                            quote!(#name (#(#fields),*)),
                            quote!(#copy::#name #moved => Self::#name #moved),
                        )
                    }
                    Fields::Unit if internally_tagged => {
                        (quote!(#name {}), quote!(#copy::#name {} => Self::#name))
                    }
                    Fields::Unit => (quote!(#name), quote!(#copy::#name => Self::#name)),
                };
                definitions.push(quote!(#(#attrs)* #definition));
                arms.push(arm);
            }
            (
                quote!(enum #copy #generics #where_clause { #(#definitions),* }),
                quote!(::core::result::Result::Ok(match __copy { #(#arms),* })),
            )
        }
        // Refused with an error already; this keeps it the only one (`StrictSchema`
        // requires the impl). It never runs, since the crate does not compile.
        Shape::Unsupported { .. } => {
            return quote! {
                impl #impl_generics #private::StrictDeserialize for #ident #type_generics #where_clause {
                    fn deserialize_strict<'de, __D: #private::serde::Deserializer<'de>>(
                        _: __D,
                    ) -> ::core::result::Result<Self, __D::Error> {
                        ::core::unreachable!("a shape strict mode refuses does not compile")
                    }
                }
            }
        }
    };

    let container_keys: Vec<&str> = CONTAINER_KEYS
        .iter()
        .copied()
        .filter(|name| !(internally_tagged && *name == "tag"))
        .collect();
    let container = kept(&input.keys, &container_keys);
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
    let tag = match &internal_tag {
        Some(tag) => quote!(::core::option::Option::Some(#tag)),
        None => quote!(::core::option::Option::None),
    };
    let read = if buffered {
        quote!(#private::deserialize_buffered::<__D, #copy #type_generics>(__deserializer, #tag)?)
    } else {
        quote!(<#copy #type_generics as #private::serde::Deserialize>::deserialize(__deserializer)?)
    };
    let crate_path = quote!(#private::serde).to_string();
    quote! {
        const _: () = {
            #alias
            const _: () = {
                #[derive(#private::serde::Deserialize)]
                #[serde(crate = #crate_path, deny_unknown_fields, bound = #bound)]
                #(#container)*
                #[allow(non_camel_case_types)]
                #definition

                impl #impl_generics #copy #type_generics #where_clause {
                    #(#readers)*
                }

                impl #impl_generics #private::StrictDeserialize for #author #type_generics #where_clause {
                    fn deserialize_strict<'de, __D: #private::serde::Deserializer<'de>>(
                        __deserializer: __D,
                    ) -> ::core::result::Result<Self, __D::Error> {
                        let __copy = #read;
                        #conversion
                    }
                }
            };
        };
    }
}

/// `tokens` with the author's type, as a field type names it (`ident` not after `::`, or
/// `Self`), named `author` instead: inside the copy's scope, `ident` is the copy.
fn naming_author(tokens: TokenStream, ident: &Ident, author: &Ident) -> TokenStream {
    let mut after_path_sep = false;
    let mut colons = 0;
    tokens
        .into_iter()
        .map(|token| {
            let token = match token {
                TokenTree::Ident(name) if (name == *ident || name == "Self") && !after_path_sep => {
                    TokenTree::Ident(author.clone())
                }
                TokenTree::Group(group) => {
                    let mut renamed = proc_macro2::Group::new(
                        group.delimiter(),
                        naming_author(group.stream(), ident, author),
                    );
                    renamed.set_span(group.span());
                    TokenTree::Group(renamed)
                }
                other => other,
            };
            colons = match &token {
                TokenTree::Punct(punct) if punct.as_char() == ':' => colons + 1,
                _ => 0,
            };
            after_path_sep = colons == 2;
            token
        })
        .collect()
}

/// What moves `count` fields from the copy into the author's type, as a pattern and as
/// an expression: `{ a: __field0 }` with names, `(__field0)` without. Bindings never take
/// the fields' own names, which a constant in scope could shadow.
fn moved<'a>(count: usize, names: Option<impl Iterator<Item = &'a Ident>>) -> TokenStream {
    let bindings = (0..count).map(|i| format_ident!("__field{i}"));
    match names {
        Some(names) => quote!({ #(#names: #bindings),* }),
        None => quote!((#(#bindings),*)),
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
