//! The registration of a checked hook: the author's function, unchanged, and beside it a
//! constant descriptor submitted to the engine's registry.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ReturnType;

use super::check::Hook;
use crate::function::output_span;
use crate::localized::expand_option;

pub fn hook(hook: &Hook) -> TokenStream {
    let Hook {
        sdk,
        function,
        name,
        description,
        position,
        timeout_ms,
        mutates_response,
        ..
    } = hook;
    let private = quote!(#sdk::__private);
    let ident = &function.sig.ident;
    let payload = Ident::new(hook.event.payload(), Span::call_site());
    let payload = quote!(#private::#payload);

    // Parameters are reached only through `HookParameter`, spanned at the author's type,
    // so a wrong one is reported there once, naming the event; each use names the item
    // as a value (the extraction through `extract_hook_param_with`), as a tool's do.
    let bindings: Vec<_> = (0..hook.params.len())
        .map(|i| format_ident!("__param{i}"))
        .collect();
    let parameter = quote!(#private::HookParameter<#payload>);
    let item = |ty: &syn::Type, item: &str| crate::tool::qualified(ty, &parameter, item);
    let is_async = function.sig.asyncness.is_some();
    let suspends = is_async && crate::suspend::may_suspend(&function.block);
    // A parameter the turn cannot give fails the run before the body starts.
    let extractions = hook.params.iter().zip(&bindings).map(|(ty, binding)| {
        let extract = item(ty, "extract");
        let failed = if suspends {
            quote!(return #private::hook_failed::<#payload>(__error))
        } else {
            quote!(return ::core::result::Result::Err(__error))
        };
        quote! {
            let #binding = match #private::extract_hook_param_with(#extract, __input) {
                ::core::result::Result::Ok(__value) => __value,
                ::core::result::Result::Err(__error) => #failed,
            };
        }
    });
    // What the parameters read, for the engine to build only that.
    let needs = hook.params.iter().map(|ty| item(ty, "NEEDS"));
    let secrets = hook.params.iter().map(|ty| item(ty, "SECRETS"));
    // The payload once: a rule at each parameter, as a tool's (see `__private`).
    let payloads: Vec<_> = hook
        .params
        .iter()
        .map(|ty| item(ty, "IS_PAYLOAD"))
        .collect();
    let param_rules = hook.params.iter().enumerate().map(|(i, ty)| {
        let span = syn::spanned::Spanned::span(ty);
        let (is_payload, payloads_before) = (&payloads[i], &payloads[..i]);
        let private = crate::errors::respan(private.clone(), span);
        quote_spanned! {span=>
            const _: () = <#private::ParamCount<{ #private::count(&[#(#payloads_before),*]) }, { #is_payload }>
                as #private::OnePayload>::OK;
        }
    });
    // The return type is reached only through the event's return trait, at the return
    // type: its message names the event and what it allows.
    let returned = match &function.sig.output {
        ReturnType::Type(_, ty) => quote!(#ty),
        ReturnType::Default => quote!(()),
    };
    let return_trait = Ident::new(
        hook.event.return_trait(*mutates_response),
        Span::call_site(),
    );
    let into_outcome = quote_spanned!(output_span(function)=>
        <#returned as #private::#return_trait>::into_outcome(__returned)
    );

    let entry = if suspends {
        // As a tool's: the future made and checked for `Send` at the hook's name.
        let future = quote_spanned!(ident.span()=> #private::hook_future::<_, #payload>(#ident(#(#bindings),*), __finish));
        quote! {
            fn __run<'a>(
                __input: #private::HookInput<'a, #payload>,
            ) -> #private::BoxFuture<'a, #private::HookResult<#payload>> {
                #(#extractions)*
                fn __finish(__returned: #returned) -> #private::HookResult<#payload> {
                    #into_outcome
                }
                #future
            }
            const __ENTRY: #private::HookEntry<#payload> = #private::HookEntry::Async(__run);
        }
    } else {
        let call = if is_async {
            quote!(#private::run_ready(#ident(#(#bindings),*)))
        } else {
            quote!(#ident(#(#bindings),*))
        };
        quote! {
            fn __run(__input: #private::HookInput<'_, #payload>) -> #private::HookResult<#payload> {
                #(#extractions)*
                let __returned = #call;
                #into_outcome
            }
            const __ENTRY: #private::HookEntry<#payload> = #private::HookEntry::Ready(__run);
        }
    };

    let variant = Ident::new(hook.event.payload(), Span::call_site());
    let summary = expand_option(hook.summary.as_ref(), sdk);
    let fail_closed = expand_option(hook.fail_closed.as_ref(), sdk);
    let plugin_lookup = crate::plugin::crate_checks(
        &private,
        "RenameOneOfTheHooksOfThisCrateThatShareThisName",
        name,
        hook.name_span,
        crate::plugin::Item::Hook,
    );
    quote! {
        #function

        const _: () = {
            #(#param_rules)*

            #entry

            #plugin_lookup

            #private::inventory::submit! {
                #private::HookDescriptor {
                    name: #name,
                    description: #description,
                    summary: #summary,
                    position: #position,
                    timeout: ::core::time::Duration::from_millis(#timeout_ms),
                    mutates_response: #mutates_response,
                    fail_closed: #fail_closed,
                    plugin: __plugin,
                    handler: #private::HookHandler::#variant(__ENTRY),
                    needs: #private::Needs::all_of(&[#(#needs),*]),
                    secrets: &[#(#secrets),*],
                    location: #private::SourceLocation { file: ::core::file!(), line: ::core::line!() },
                }
            }
        };
    }
}
