//! `plugin! { oauth = { google = { authorize_url = "...", token_url = "...", scopes =
//! [...] } } }`: the OAuth 2 providers a plugin's tools use, parsed and checked.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{braced, bracketed, Ident, LitStr, Token};

use super::catalogue::is_https_url;
use crate::errors::Errors;

/// The checked providers, in the order given.
#[derive(Default)]
pub struct OAuthProviders(Vec<Provider>);

struct Provider {
    id: Ident,
    authorize_url: LitStr,
    token_url: LitStr,
    scopes: Vec<LitStr>,
}

/// The longest provider id.
const MAX_ID_CHARS: usize = 32;

const FIELDS: &str = "`authorize_url = \"https://...\"`, `token_url = \"https://...\"` and `scopes = [\"...\", ...]`";

impl OAuthProviders {
    /// Parses the tokens inside `oauth = { ... }`, reporting every mistake.
    pub fn parse(tokens: TokenStream, errors: &mut Errors) -> Self {
        match parse_providers.parse2(tokens) {
            Ok(providers) => {
                providers.check(errors);
                providers
            }
            Err(error) => {
                errors.push(error);
                Self::default()
            }
        }
    }

    fn check(&self, errors: &mut Errors) {
        let mut ids = Vec::new();
        for provider in &self.0 {
            let id = provider.id.to_string();
            if let Err(message) = check_id(&id) {
                errors.at(provider.id.span(), message);
            } else if ids.contains(&id) {
                errors.at(
                    provider.id.span(),
                    format_args!("the provider `{id}` is declared twice: give it one entry, with every scope its tools need, or this one another id"),
                );
            }
            ids.push(id);
            for (url, key) in [
                (&provider.authorize_url, "authorize_url"),
                (&provider.token_url, "token_url"),
            ] {
                if !is_https_url(&url.value()) {
                    errors.at(url.span(), format_args!("`{}` is not an https URL: an OAuth `{key}` carries codes and tokens, which only TLS keeps from others on the way (an operator may point a provider at a loopback address in `[agents.<agent>.oauth]`, for tests)", url.value()));
                }
            }
            let mut scopes = Vec::new();
            for scope in &provider.scopes {
                let text = scope.value();
                // RFC 6749 §3.3: printable ASCII but `"`, `\` and the space that separates them.
                let valid = !text.is_empty()
                    && text
                        .bytes()
                        .all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b'\\');
                if !valid {
                    errors.at(scope.span(), format_args!("`{text}` is not a scope: printable ASCII without spaces, `\"` or `\\`, one scope per string"));
                } else if scopes.contains(&text) {
                    errors.at(
                        scope.span(),
                        format_args!("the scope `{text}` is listed twice: list it once"),
                    );
                }
                scopes.push(text);
            }
        }
    }

    /// `&[OAuthProvider { ... }, ...]`, for the manifest.
    pub fn expand(&self, private: &TokenStream) -> TokenStream {
        let providers = self.0.iter().map(|provider| {
            let id = provider.id.to_string();
            let Provider {
                authorize_url,
                token_url,
                scopes,
                ..
            } = provider;
            quote!(#private::OAuthProvider {
                id: #id,
                authorize_url: #authorize_url,
                token_url: #token_url,
                scopes: &[#(#scopes),*],
            })
        });
        quote!(&[#(#providers),*])
    }
}

/// An id the engine names `<namespace>:<id>` in its configuration and routes: lowercase
/// letters, digits and `_`, a letter first.
fn check_id(id: &str) -> Result<(), String> {
    let mut chars = id.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && id.len() <= MAX_ID_CHARS;
    if valid {
        Ok(())
    } else {
        Err(format!("`{id}` is not a provider id: 1 to {MAX_ID_CHARS} of lowercase letters, digits and `_`, a letter first (`google`)"))
    }
}

fn parse_providers(input: ParseStream) -> syn::Result<OAuthProviders> {
    let providers = Punctuated::<Provider, Token![,]>::parse_terminated_with(input, |input| {
        let id: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let content;
        braced!(content in input);
        parse_provider(id, &content)
    })?;
    Ok(OAuthProviders(providers.into_iter().collect()))
}

fn parse_provider(id: Ident, input: ParseStream) -> syn::Result<Provider> {
    let (mut authorize_url, mut token_url, mut scopes) = (None, None, None);
    while !input.is_empty() {
        let key: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let slot_given = match &*key.to_string() {
            "authorize_url" => authorize_url.replace(input.parse::<LitStr>()?).is_some(),
            "token_url" => token_url.replace(input.parse::<LitStr>()?).is_some(),
            "scopes" => {
                let content;
                bracketed!(content in input);
                let listed = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
                scopes
                    .replace(listed.into_iter().collect::<Vec<_>>())
                    .is_some()
            }
            "client_id" | "client_secret" => {
                return Err(syn::Error::new(
                    key.span(),
                    format_args!("`{key}` is not the plugin's to give: each agent's operator gives its own client in `[agents.<agent>.oauth.\"<namespace>:{id}\"]`; a provider takes {FIELDS}"),
                ))
            }
            _ => {
                return Err(syn::Error::new(
                    key.span(),
                    format_args!("unknown key `{key}` in the provider `{id}`; it takes {FIELDS}"),
                ))
            }
        };
        if slot_given {
            return Err(syn::Error::new(
                key.span(),
                format_args!("`{key}` is given twice"),
            ));
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    let missing = |what: &str| {
        syn::Error::new(
            id.span(),
            format_args!("the provider `{id}` needs `{what}`; it takes {FIELDS}"),
        )
    };
    Ok(Provider {
        authorize_url: authorize_url.ok_or_else(|| missing("authorize_url"))?,
        token_url: token_url.ok_or_else(|| missing("token_url"))?,
        scopes: scopes.ok_or_else(|| missing("scopes"))?,
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_lowercase_letters_digits_and_underscores_a_letter_first() {
        for id in ["google", "ms_graph", "g2", &"a".repeat(MAX_ID_CHARS)] {
            assert!(check_id(id).is_ok(), "{id}");
        }
        for id in ["Google", "2fa", "_x", "a-b", &"a".repeat(MAX_ID_CHARS + 1)] {
            assert!(check_id(id).is_err(), "{id}");
        }
    }
}
