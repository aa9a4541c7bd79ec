//! The registration of a checked tool: the author's function, unchanged, and beside it
//! a constant descriptor submitted to the engine's registry.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use super::check::{Output, Tool};
use super::Kind;
use crate::function::output_span;
use crate::localized::expand_option;

pub fn tool(tool: &Tool) -> TokenStream {
    let Tool {
        sdk,
        function,
        name,
        description,
        ..
    } = tool;
    let private = quote!(#sdk::__private);
    let ident = &function.sig.ident;
    let params = &tool.params;
    let bindings: Vec<_> = (0..params.len())
        .map(|i| format_ident!("__param{i}"))
        .collect();

    let output_ty = match &tool.output {
        Output::Result(ty) => qualified(ty, &quote!(#private::IntoToolResult), "Output"),
        Output::Value(ty) => quote!(#ty),
        Output::Unit => quote!(()),
    };
    // Reached only through `<T as ToolOutput>`, at the return type: one error there.
    let returned = match &function.sig.output {
        syn::ReturnType::Type(_, ty) => quote!(#ty),
        syn::ReturnType::Default => quote!(()),
    };
    let as_output = quote_spanned!(output_span(function)=> <#output_ty as #private::ToolOutput>);
    let into_output = match &tool.output {
        Output::Result(ty) => {
            let into = qualified(ty, &quote!(#private::IntoToolResult), "into_tool_result");
            let call = quote_spanned!(last_span(ty)=> (__returned)?);
            quote!(#into #call)
        }
        Output::Value(_) | Output::Unit => quote!(__returned),
    };

    // Parameter types are reached only as generic arguments, `param::<T>()`, which
    // rustc reports at the author's whole type: an unmet bound gives identical
    // diagnostics there, which rustc reports once.
    let param_fn = |ty: &syn::Type, item: &str| qualified(ty, &quote!(#private::Param), item);
    let param_const = param_fn;
    // The extraction too names `<T as Param>::extract` as a value, passed to
    // `extract_with`: called through its path, rustc words an unmet bound otherwise than
    // at every other use (see `extract_with`).
    let extractions: Vec<_> = params
        .iter()
        .zip(&bindings)
        .map(|(ty, binding)| {
            let extract = param_fn(ty, "extract");
            quote!(let #binding = #private::extract_with(#extract, &__input)?;)
        })
        .collect();
    let arguments: Vec<_> = params
        .iter()
        .map(|ty| param_const(ty, "ARGUMENTS"))
        .collect();
    let knowledge: Vec<_> = params
        .iter()
        .map(|ty| param_const(ty, "IS_KNOWLEDGE"))
        .collect();
    let shared: Vec<_> = params
        .iter()
        .map(|ty| param_const(ty, "IS_SHARED"))
        .collect();
    let arguments_count = quote!(#private::count(&[#(#arguments),*]));
    let strict = tool.strict;
    // Each rule at the parameter that breaks it, as a bound (see `__private`).
    let param_rules = params.iter().enumerate().map(|(i, ty)| {
        let span = ty.span();
        let (is_arguments, arguments_before) = (&arguments[i], &arguments[..i]);
        let (is_knowledge, knowledge_before) = (&knowledge[i], &knowledge[..i]);
        let (is_shared, shared_before) = (&shared[i], &shared[..i]);
        let param_strict = param_const(ty, "STRICT");
        // The SDK's path at the parameter too: a span that mixes the parameter and the
        // attribute would be reported at the attribute.
        let private = crate::errors::respan(private.clone(), span);
        quote_spanned! {span=>
            const _: () = <#private::ParamCount<{ #private::count(&[#(#arguments_before),*]) }, { #is_arguments }>
                as #private::OneArgumentsStruct>::OK;
            const _: () = <#private::ParamCount<{ #private::count(&[#(#knowledge_before),*]) }, { #is_knowledge }>
                as #private::OneKnowledgeExtractor>::OK;
            const _: () = <#private::ParamCount<{ #private::count(&[#(#shared_before),*]) }, { #is_shared }>
                as #private::OneSharedState>::OK;
            const _: () = <#private::ParamStrict<#strict, { !#is_arguments || #param_strict }>
                as #private::StrictFits>::OK;
        }
    });
    // An action's parameters also answer to `ActionParam`, at each one's type.
    let action_rules = params
        .iter()
        .filter(|_| tool.kind == Kind::Action)
        .map(|ty| {
            let ok = qualified(ty, &quote!(#private::ActionParam), "OK");
            quote!(const _: () = #ok;)
        });
    let input_schemas = params.iter().map(|ty| param_fn(ty, "input_schema"));
    let argument_checks: Vec<_> = params
        .iter()
        .map(|ty| param_fn(ty, "check_arguments"))
        .collect();
    let secrets = params.iter().map(|ty| param_const(ty, "SECRETS"));
    let knowledge_needs = params.iter().map(|ty| param_const(ty, "KNOWLEDGE"));
    let needs = params.iter().map(|ty| param_const(ty, "NEEDS"));

    let summary = expand_option(tool.summary.as_ref(), sdk);
    let category = match &tool.category {
        Some(category) => quote!(::core::option::Option::Some(#category)),
        None => quote!(::core::option::Option::None),
    };
    let hint = |value: Option<bool>| match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let exclusive = tool.exclusive;
    let (read_only, destructive, idempotent, open_world) = (
        hint(tool.annotations.read_only),
        hint(tool.annotations.destructive),
        hint(tool.annotations.idempotent),
        hint(tool.annotations.open_world),
    );
    let examples = &tool.examples;
    let check_no_arguments = quote! {
        if __ARGUMENTS == 0 {
            #private::expect_no_arguments(__input.arguments())?;
        }
    };
    // A body that cannot suspend runs as a plain function, with no future to box; see
    // `suspend`.
    let ident_span = ident.span();
    let entry = if crate::suspend::may_suspend(&function.block) {
        // The body's future is made and checked for `Send` at the tool's name, as axum's
        // `debug_handler` does; extraction runs before it, synchronously.
        let future =
            quote_spanned!(ident_span=> #private::tool_future(#ident(#(#bindings),*), __finish));
        quote! {
            fn __start<'a>(
                __input: #private::CallInput<'a>,
            ) -> ::core::result::Result<
                #private::BoxFuture<'a, ::core::result::Result<::std::string::String, #private::ToolError>>,
                #private::ToolError,
            > {
                #check_no_arguments
                #(#extractions)*
                fn __finish(
                    __returned: #returned,
                ) -> ::core::result::Result<::std::string::String, #private::ToolError> {
                    let __output = #into_output;
                    #as_output::to_json(&__output)
                }
                ::core::result::Result::Ok(#future)
            }
            fn __call<'a>(
                __input: #private::CallInput<'a>,
            ) -> #private::BoxFuture<'a, ::core::result::Result<::std::string::String, #private::ToolError>> {
                match __start(__input) {
                    ::core::result::Result::Ok(__future) => __future,
                    ::core::result::Result::Err(__error) => #private::tool_failed(__error),
                }
            }
            const __ENTRY: #private::ToolEntry = #private::ToolEntry::Async(__call);
        }
    } else {
        quote! {
            fn __call(
                __input: #private::CallInput<'_>,
            ) -> ::core::result::Result<::std::string::String, #private::ToolError> {
                #check_no_arguments
                #(#extractions)*
                let __returned = #private::run_ready(#ident(#(#bindings),*));
                let __output = #into_output;
                #as_output::to_json(&__output)
            }
            const __ENTRY: #private::ToolEntry = #private::ToolEntry::Ready(__call);
        }
    };

    let staged = match tool.kind {
        Kind::Tool => quote!(::core::option::Option::None),
        Kind::Action => quote!(::core::option::Option::Some(__stage)),
    };
    let stage = (tool.kind == Kind::Action).then(|| {
        quote! {
            fn __stage(
                __arguments: &str,
            ) -> ::core::result::Result<(), #private::ToolError> {
                #private::check_arguments(__arguments, __ARGUMENTS, &[#(#argument_checks),*])
            }
        }
    });
    let example_tests = example_tests(tool, &arguments_count, &argument_checks);
    let plugin_lookup = crate::plugin::crate_checks(
        &private,
        "RenameOneOfTheToolsOfThisCrateThatShareThisName",
        name,
        tool.name_span,
        match tool.kind {
            Kind::Tool => crate::plugin::Item::Tool,
            Kind::Action => crate::plugin::Item::Action,
        },
    );

    quote! {
        #function

        const _: () = {
            const __ARGUMENTS: usize = #arguments_count;
            const __KNOWLEDGE: ::core::option::Option<#private::KnowledgeNeed> =
                #private::knowledge_need(&[#(#knowledge_needs),*]);
            #(#param_rules)*
            #(#action_rules)*
            #stage

            fn __input_schema() -> #private::Schema {
                #private::first_input_schema(&[#(#input_schemas),*])
            }

            fn __output_schema() -> #private::Schema {
                #as_output::output_schema()
            }

            #entry

            #plugin_lookup

            #private::inventory::submit! {
                #private::ToolDescriptor {
                    name: #name,
                    description: #description,
                    summary: #summary,
                    category: #category,
                    annotations: #private::ToolAnnotations {
                        read_only: #read_only,
                        destructive: #destructive,
                        idempotent: #idempotent,
                        open_world: #open_world,
                    },
                    strict: #strict,
                    exclusive: #exclusive,
                    staged: #staged,
                    examples: &[#(#examples),*],
                    plugin: __plugin,
                    input_schema: __input_schema,
                    output_schema: __output_schema,
                    entry: __ENTRY,
                    secrets: &[#(#secrets),*],
                    knowledge: __KNOWLEDGE,
                    needs: #private::Needs::all_of(&[#(#needs),*]),
                    location: #private::SourceLocation { file: ::core::file!(), line: ::core::line!() },
                }
            }
        };

        #example_tests
    }
}

/// One unit test per example, deserializing it into the tool's parameters.
fn example_tests(
    tool: &Tool,
    arguments_count: &TokenStream,
    argument_checks: &[TokenStream],
) -> TokenStream {
    if tool.examples.is_empty() {
        return TokenStream::new();
    }
    let private = {
        let sdk = &tool.sdk;
        quote!(#sdk::__private)
    };
    let module = format_ident!("__{}_examples", tool.function.sig.ident);
    let tests = tool.examples.iter().enumerate().map(|(index, example)| {
        let test = format_ident!("example_{}", index + 1);
        let name = &tool.name;
        quote! {
            #[test]
            fn #test() {
                if let ::core::result::Result::Err(error) =
                    #private::check_arguments(#example, #arguments_count, &[#(#argument_checks),*])
                {
                    ::core::panic!("example {} of `{}` does not fit its arguments: {}", #index + 1, #name, error);
                }
            }
        }
    });
    quote! {
        #[cfg(test)]
        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #module {
            #[allow(unused_imports)]
            use super::*;
            #(#tests)*
        }
    }
}

/// `<ty as trait_>::item`, with `<` spanned at the type's first token and the rest at its
/// last: rustc then reports an unmet bound over the whole type, the same span wherever
/// the path stands, so once.
pub fn qualified(ty: &syn::Type, trait_: &TokenStream, item: &str) -> TokenStream {
    let first = ty.span();
    let last = last_span(ty);
    let item = format_ident!("{}", item, span = last);
    let open = quote_spanned!(first=> <);
    let close = quote_spanned!(last=> as #trait_>::#item);
    quote!(#open #ty #close)
}

/// The span of the type's last token (`ty.span()` is its first).
pub fn last_span(ty: &syn::Type) -> proc_macro2::Span {
    ty.to_token_stream()
        .into_iter()
        .last()
        .map_or_else(|| ty.span(), |token| token.span())
}
