//! `plugin! { system = { debian = [...], env = { NAME = "value" } } }`: what the engine's
//! image must carry for the plugin's tools to work, parsed and checked.

use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{braced, bracketed, Ident, LitStr, Token};

use crate::errors::Errors;

/// The checked block.
#[derive(Default)]
pub struct System {
    /// Debian packages, as written.
    pub debian: Vec<LitStr>,
    /// Variables and their defaults.
    pub env: Vec<(Ident, LitStr)>,
}

impl System {
    /// Parses the tokens inside `system = { ... }`, reporting every mistake.
    pub fn parse(tokens: TokenStream, errors: &mut Errors) -> Self {
        match parse_fields.parse2(tokens) {
            Ok(system) => {
                system.check(errors);
                system
            }
            Err(error) => {
                errors.push(error);
                Self::default()
            }
        }
    }

    fn check(&self, errors: &mut Errors) {
        let mut seen = Vec::new();
        for package in &self.debian {
            let name = package.value();
            if let Err(message) = check_package(&name) {
                errors.at(package.span(), message);
            } else if seen.contains(&name) {
                errors.at(package.span(), format_args!("`{name}` is listed twice"));
            }
            seen.push(name);
        }
        let mut seen = Vec::new();
        for (name, value) in &self.env {
            let text = name.to_string();
            if let Err(message) = check_variable(&text) {
                errors.at(name.span(), message);
            } else if seen.contains(&text) {
                errors.at(name.span(), format_args!("`{text}` is declared twice"));
            }
            if value.value().chars().any(char::is_control) {
                errors.at(value.span(), format_args!("the default of `{text}` holds a control character (a newline, a NUL...): an image's environment cannot carry it"));
            }
            seen.push(text);
        }
    }
}

const FIELDS: &str = "`debian = [\"package\", ...]` and `env = { NAME = \"value\", ... }`";

fn parse_fields(input: ParseStream) -> syn::Result<System> {
    let mut system = System::default();
    let mut given: Vec<String> = Vec::new();
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        if given.contains(&key.to_string()) {
            return Err(syn::Error::new(
                key.span(),
                format_args!("`{key}` is given twice"),
            ));
        }
        given.push(key.to_string());
        input.parse::<Token![=]>()?;
        let content;
        match &*key.to_string() {
            "debian" => {
                bracketed!(content in input);
                system.debian = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?
                    .into_iter()
                    .collect();
            }
            "env" => {
                braced!(content in input);
                system.env = Punctuated::<(Ident, LitStr), Token![,]>::parse_terminated_with(
                    &content,
                    |input| {
                        let name: Ident = input.parse()?;
                        input.parse::<Token![=]>()?;
                        Ok((name, input.parse()?))
                    },
                )?
                .into_iter()
                .collect();
            }
            _ => {
                return Err(syn::Error::new(
                    key.span(),
                    format_args!("unknown key `{key}` in `system`; it takes {FIELDS}"),
                ))
            }
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(system)
}

/// A Debian package name as policy allows it (lowercase letters, digits, `+`, `-`, `.`,
/// two characters or more, starting with a letter or digit): plain enough to pass through
/// an `apt-get install` argument list unquoted.
fn check_package(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
        && name.len() >= 2;
    if plain {
        Ok(())
    } else {
        Err(format!("`{name}` is not a Debian package name: lowercase letters, digits, `+`, `-` and `.`, starting with a letter or digit, two characters or more"))
    }
}

/// Variables no plugin may default: they change how every process in the image runs
/// (its search path, its loader, its trust store, its proxy, its logging), not one
/// plugin's tools. Prefixes end in `_`; compared without case.
const PROCESS_WIDE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "SHELL",
    "PWD",
    "TMPDIR",
    "LANG",
    "LC_",
    "TZ",
    "LD_",
    "DYLD_",
    "RUST_",
    "CARGO_",
    "SSL_CERT_",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];

/// A variable name a shell and a Dockerfile take (letters, digits, `_`, not starting with
/// a digit; an identifier already guarantees that much), outside the engine's own and the
/// process-wide ones.
fn check_variable(name: &str) -> Result<(), String> {
    let upper = name.to_ascii_uppercase();
    if upper.starts_with("ENGINE_") {
        return Err(format!("`{name}` is in the engine's own namespace (`ENGINE_`, where its configuration, secrets and token live): name the variable after your plugin"));
    }
    let process_wide = PROCESS_WIDE
        .iter()
        .any(|denied| match denied.strip_suffix('_') {
            Some(_) => upper.starts_with(denied),
            None => upper == *denied,
        });
    if process_wide {
        return Err(format!("`{name}` changes every process in the image, not your plugin's tools: set it in the image's environment, or name a variable of your own that your tools read"));
    }
    if name.starts_with("r#") || !name.is_ascii() {
        return Err(format!(
            "`{name}` is not a variable name: ASCII letters, digits and `_`"
        ));
    }
    Ok(())
}
