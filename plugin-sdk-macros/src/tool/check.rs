//! The rules a tool function must follow; each error says what to write instead.

use syn::{ItemFn, ReturnType, Type};

use super::parse::ToolAttrs;
use crate::attr::sdk_path;
use crate::errors::Errors;
use crate::function;
use crate::localized::Localized;
use crate::names;

use super::Kind;

/// A checked tool, ready to expand.
pub struct Tool<'a> {
    pub sdk: syn::Path,
    pub function: &'a ItemFn,
    pub name: String,
    pub name_span: proc_macro2::Span,
    pub description: String,
    pub summary: Option<Localized>,
    pub category: Option<String>,
    pub annotations: Annotations,
    /// Example arguments, re-serialized as compact JSON.
    pub examples: Vec<String>,
    pub strict: bool,
    /// Whether the tool runs alone: no other call of its turn runs beside it.
    pub exclusive: bool,
    /// A tool, or a staged action.
    pub kind: Kind,
    pub params: Vec<&'a Type>,
    pub output: Output<'a>,
}

pub struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// How the function's return type becomes the tool's output.
pub enum Output<'a> {
    /// `-> Result<T, E>`: `T` is the output, `E` converts into `ToolError`.
    Result(&'a Type),
    /// `-> T`.
    Value(&'a Type),
    /// No return type: `()`.
    Unit,
}

pub fn tool<'a>(
    attrs: ToolAttrs,
    function: &'a ItemFn,
    kind: Kind,
    errors: &mut Errors,
) -> Tool<'a> {
    let signature = &function.sig;
    let noun = kind.noun();
    if signature.asyncness.is_none() {
        errors.at(
            signature.fn_token.span,
            format_args!(
                "{} {noun} is an `async fn`: write `async fn` here",
                article(noun)
            ),
        );
    }
    let common = function::common(
        function,
        noun,
        attrs.name.as_ref(),
        attrs.summary.as_ref(),
        (
            "name concrete types (references need no lifetime, write `&ToolContext`)",
            "is the description the model reads",
        ),
        errors,
    );
    if let Err(message) = names::check_not_builtin(&common.name) {
        errors.at(common.name_span, message);
    }
    let category = attrs.category.map(|lit| {
        if let Err(message) = names::check_category(&lit.value()) {
            errors.at(lit.span(), message);
        }
        lit.value()
    });
    let examples = attrs
        .examples
        .iter()
        .filter_map(|lit| check_example(lit, errors))
        .collect();

    let output = match &signature.output {
        ReturnType::Default => Output::Unit,
        ReturnType::Type(_, ty) if is_result(ty) => Output::Result(ty),
        ReturnType::Type(_, ty) => Output::Value(ty),
    };

    Tool {
        sdk: sdk_path(attrs.krate),
        function,
        name: common.name,
        name_span: common.name_span,
        description: common.description,
        summary: attrs.summary,
        category,
        annotations: Annotations {
            // An action changes something, by definition: clients are told so.
            read_only: match kind {
                Kind::Tool => attrs.read_only.map(|(value, _)| value),
                Kind::Action => Some(false),
            },
            destructive: attrs.destructive.map(|(value, _)| value),
            idempotent: attrs.idempotent.map(|(value, _)| value),
            open_world: attrs.open_world.map(|(value, _)| value),
        },
        examples,
        strict: attrs.strict.is_none_or(|(value, _)| value),
        exclusive: attrs.exclusive.is_some_and(|(value, _)| value),
        kind,
        params: common.params,
        output,
    }
}

fn article(noun: &str) -> &'static str {
    if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// An example must be a JSON object: the arguments the model would send.
fn check_example(lit: &syn::LitStr, errors: &mut Errors) -> Option<String> {
    let fail = |errors: &mut Errors, message: String| {
        errors.at(lit.span(), message);
        None
    };
    match serde_json::from_str::<serde_json::Value>(&lit.value()) {
        Ok(value @ serde_json::Value::Object(_)) => Some(value.to_string()),
        Ok(_) => fail(errors, "an example is the arguments object the model would send: write `r#\"{ \"field\": ... }\"#`".into()),
        Err(error) => fail(errors, format!("this example is not valid JSON ({error}): write the arguments object, e.g. `r#\"{{ \"city\": \"Rome\" }}\"#`")),
    }
}

/// `Result<..>` by its last path segment, so `io::Result` and aliases named `Result`
/// count; the conversion is then checked by the `IntoToolResult` bound.
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => {
            path.qself.is_none()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|segment| segment.ident == "Result")
        }
        _ => false,
    }
}
