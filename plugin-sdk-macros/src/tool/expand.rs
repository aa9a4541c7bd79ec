//! The registration of a checked tool: the author's function, unchanged, and beside it
//! a constant descriptor submitted to the engine's registry.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::check::{Output, Tool};
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
        Output::Result(ty) => {
            quote_spanned!(ty.span()=> <#ty as #private::IntoToolResult>::Output)
        }
        Output::Value(ty) => quote!(#ty),
        Output::Unit => quote!(()),
    };
    // Reached only through `<T as ToolOutput>`, at the return type: one error there.
    let as_output = quote_spanned!(output_span(function)=> <#output_ty as #private::ToolOutput>);
    let into_output = match &tool.output {
        Output::Result(_) => quote!(#private::IntoToolResult::into_tool_result(__returned)?),
        Output::Value(_) | Output::Unit => quote!(__returned),
    };

    // Parameter types are reached only through `<T as ToolParam>`, spanned at the
    // author's type: an unmet bound gives identical diagnostics there, which rustc
    // reports once.
    let params_as_trait: Vec<_> = params
        .iter()
        .map(|ty| quote_spanned!(ty.span()=> <#ty as #private::ToolParam>))
        .collect();
    let extractions: Vec<_> = params.iter().zip(&params_as_trait).zip(&bindings).map(|((ty, param), binding)| {
        quote_spanned!(ty.span()=> let #binding = #param::extract(&__input)?;)
    }).collect();
    let arguments_count = quote!(0usize #(+ #params_as_trait::ARGUMENTS as usize)*);
    let params_strict = quote!(true #(&& #params_as_trait::STRICT)*);
    let strict = tool.strict;
    let input_schemas = params_as_trait
        .iter()
        .map(|param| quote!(#param::input_schema));
    let argument_checks: Vec<_> = params_as_trait
        .iter()
        .map(|param| quote!(#param::check_arguments))
        .collect();

    let summary = expand_option(tool.summary.as_ref(), sdk);
    let category = match &tool.category {
        Some(category) => quote!(::core::option::Option::Some(#category)),
        None => quote!(::core::option::Option::None),
    };
    let hint = |value: Option<bool>| match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
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
    let entry = if crate::suspend::may_suspend(&function.block) {
        quote! {
            fn __call<'a>(
                __input: #private::CallInput<'a>,
            ) -> #private::BoxFuture<'a, ::core::result::Result<::std::string::String, #private::ToolError>> {
                ::std::boxed::Box::pin(async move {
                    #check_no_arguments
                    #(#extractions)*
                    let __returned = #ident(#(#bindings),*).await;
                    let __output = #into_output;
                    #as_output::to_json(&__output)
                })
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
    let example_tests = example_tests(tool, &arguments_count, &argument_checks);
    let plugin_lookup = crate::plugin::lookup(&private);

    quote! {
        #function

        const _: () = {
            const __ARGUMENTS: usize = #arguments_count;
            const _: () = if __ARGUMENTS > 1 {
                ::core::panic!("a tool takes one arguments struct (`#[derive(ToolArgs)]`): put every field the model fills into that one struct")
            };
            const __KNOWLEDGE: ::core::option::Option<#private::KnowledgeNeed> =
                #private::knowledge_need(&[#(#params_as_trait::KNOWLEDGE),*]);
            const _: () = if #strict && !(#params_strict) {
                ::core::panic!("the arguments type opted out of strict mode (`#[tool_args(strict = false)]`): mark the tool `#[define_tool(strict = false)]` too")
            };

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
                    examples: &[#(#examples),*],
                    plugin: __plugin,
                    input_schema: __input_schema,
                    output_schema: __output_schema,
                    entry: __ENTRY,
                    secrets: &[#(#params_as_trait::SECRETS),*],
                    knowledge: __KNOWLEDGE,
                    needs: #private::Needs::all_of(&[#(#params_as_trait::NEEDS),*]),
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
                    #private::check_example(#example, #arguments_count, &[#(#argument_checks),*])
                {
                    ::core::panic!("example {} of tool `{}` does not fit its arguments: {}", #index + 1, #name, error);
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
