//! The bundle's keys, its construction from the call's secrets, and its use as a tool
//! parameter.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::Bundle;

pub fn bundle(bundle: &Bundle) -> TokenStream {
    let Bundle { sdk, ident, keys } = bundle;
    let private = quote!(#sdk::__private);
    let specs = keys.iter().map(|key| {
        let name = key.field.to_string();
        let label = key.label.as_ref().expect("checked").expand(sdk);
        let description = key.description.as_ref().expect("checked").expand(sdk);
        quote!(#private::SecretSpec { key: #name, label: #label, description: #description })
    });
    // Each field is built through `FromSecret`, spanned at its type: a field that is not
    // a `Secret` is reported there, once.
    let fields = keys.iter().map(|key| {
        let (field, ty) = (key.field, key.ty);
        let name = field.to_string();
        let build = quote_spanned!(ty.span()=> <#ty as #private::FromSecret>::from_secret);
        quote!(#field: #build(lookup(#name).ok_or(#name)?))
    });
    quote! {
        impl #private::SecretBundle for #ident {
            const KEYS: &'static [#private::SecretSpec] = &[#(#specs),*];

            fn from_values(
                lookup: &dyn ::core::ops::Fn(&str) -> ::core::option::Option<#private::Secret>,
            ) -> ::core::result::Result<Self, &'static str> {
                ::core::result::Result::Ok(Self { #(#fields),* })
            }
        }

        impl #private::ToolParam for #ident {
            const SECRETS: &'static [#private::SecretSpec] =
                <Self as #private::SecretBundle>::KEYS;
            type Extracted<'a> = Self;

            fn extract<'a>(
                input: &#private::CallInput<'a>,
            ) -> ::core::result::Result<Self, #private::ToolError> {
                #private::secret_bundle(input)
            }
        }
    }
}
