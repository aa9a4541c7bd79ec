//! The bundle's keys, its construction from the call's secrets, and its use as a tool
//! parameter.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::{Bundle, Kind};

pub fn bundle(bundle: &Bundle) -> TokenStream {
    let Bundle {
        sdk,
        ident,
        generics,
        complete,
        keys,
    } = bundle;
    let private = quote!(#sdk::__private);
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    // A missing text is reported; the fallback stands in for it.
    let text = |text: Option<&crate::localized::Localized>| match text {
        Some(text) => text.expand(sdk),
        None => quote!(#sdk::__private::LocalizedText::Plain("")),
    };
    let specs = keys.iter().map(|key| {
        let name = key.field.to_string();
        let label = text(key.label.as_ref());
        let description = text(key.description.as_ref());
        let kind = match &key.kind {
            Kind::Text => quote!(#private::SecretKind::Text),
            Kind::Password => quote!(#private::SecretKind::Password),
            Kind::Select(choices) => quote!(#private::SecretKind::Select(&[#(#choices),*])),
        };
        quote!(#private::SecretSpec { key: #name, label: #label, description: #description, kind: #kind })
    });
    // Each field is built through `FromSecret`, spanned at its type: a field that is not
    // a `Secret` is reported there, once.
    let fields = keys.iter().map(|key| {
        let (field, ty) = (key.field, key.ty);
        let name = field.to_string();
        let build = crate::tool::qualified(ty, &quote!(#private::SecretField), "from_secret");
        quote!(#field: #build(lookup(#name).ok_or(#name)?))
    });
    let build = if *complete {
        quote!(::core::result::Result::Ok(Self { #(#fields),* }))
    } else {
        quote!(::core::result::Result::Err("not a secrets struct"))
    };
    // A hook takes the struct too, at any event. A generic struct is refused already, and
    // gets no impl that would have to merge its generics with the event's.
    let hook_param = generics.params.is_empty().then(|| {
        quote! {
            impl<__E: #private::HookEvent> #private::HookParam<__E> for #ident {
                const SECRETS: &'static [#private::SecretSpec] =
                    <Self as #private::SecretBundle>::KEYS;
                type Extracted<'a> = Self;

                fn extract<'a>(
                    input: #private::HookInput<'a, __E>,
                ) -> ::core::result::Result<Self, ::std::string::String> {
                    #private::hook_secret_bundle(input)
                }
            }
        }
    });
    quote! {
        impl #impl_generics #private::SecretBundle for #ident #type_generics #where_clause {
            const KEYS: &'static [#private::SecretSpec] = &[#(#specs),*];

            fn from_values(
                lookup: &dyn ::core::ops::Fn(&str) -> ::core::option::Option<#private::Secret>,
            ) -> ::core::result::Result<Self, &'static str> {
                #build
            }
        }

        impl #impl_generics #private::ActionParam for #ident #type_generics #where_clause {}

        impl #impl_generics #private::ToolParam for #ident #type_generics #where_clause {
            const SECRETS: &'static [#private::SecretSpec] =
                <Self as #private::SecretBundle>::KEYS;
            type Extracted<'a> = Self;

            fn extract<'a>(
                input: &#private::CallInput<'a>,
            ) -> ::core::result::Result<Self, #private::ToolError> {
                #private::secret_bundle(input)
            }
        }

        #hook_param
    }
}
