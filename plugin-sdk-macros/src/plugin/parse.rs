//! The fields of `plugin! { ... }`, parsed and checked.

use proc_macro2::Span;

use crate::attr::{Arg, Once};
use crate::errors::Errors;
use crate::localized::Localized;
use crate::names::{check_namespace, check_not_reserved};
use crate::symbol::*;

use super::catalogue::{Catalogue, Icon, LongDescription};
use super::oauth::OAuthProviders;
use super::system::System;

#[derive(Default)]
pub struct Manifest {
    pub sdk: Option<syn::Path>,
    pub namespace: String,
    pub engine: String,
    pub display_name: Option<Localized>,
    pub description: Option<Localized>,
    /// `api_version = N`: the action and channel API the plugin was written against.
    /// Any number parses: the engine refuses, at start-up, one it does not support.
    pub api_version: Option<u32>,
    /// `state = T`: what the plugin's tools share, built from its settings per agent.
    pub state: Option<syn::Path>,
    /// `system = { ... }`: what the engine's image must carry.
    pub system: System,
    /// What a marketplace page shows: `long_description`, `icon`, `category`,
    /// `publisher`, `documentation_url`.
    pub catalogue: Catalogue,
    /// `oauth = { id = { ... } }`: the OAuth 2 providers its tools use.
    pub oauth: OAuthProviders,
}

impl Manifest {
    pub fn from_args(args: Vec<Arg>, errors: &mut Errors) -> Self {
        let mut namespace = Once::default();
        let mut engine = Once::default();
        let mut display_name = Once::default();
        let mut description = Once::default();
        let mut api_version = Once::default();
        let mut state = Once::default();
        let mut system = Once::default();
        let mut long_description = Once::default();
        let mut long_description_file = Once::default();
        let mut icon = Once::default();
        let mut category = Once::default();
        let mut publisher = Once::default();
        let mut documentation_url = Once::default();
        let mut oauth = Once::default();
        let mut krate = Once::default();
        for arg in args {
            let key = arg.key.clone();
            match &*key.to_string() {
                NAMESPACE => namespace.set(&key, arg.string(errors), errors),
                ENGINE => engine.set(&key, arg.string(errors), errors),
                DISPLAY_NAME => display_name.set(&key, arg.localized(errors), errors),
                DESCRIPTION => description.set(&key, arg.localized(errors), errors),
                API_VERSION => {
                    let version = arg.int(0..=u64::from(u32::MAX), errors);
                    api_version.set(&key, version.map(|(value, _)| value as u32), errors)
                }
                STATE => state.set(&key, arg.path(errors), errors),
                SYSTEM => system.set(&key, arg.block(errors), errors),
                LONG_DESCRIPTION => long_description.set(&key, arg.localized(errors), errors),
                LONG_DESCRIPTION_FILE => long_description_file.set(
                    &key,
                    arg.localized(errors).map(|paths| (key.clone(), paths)),
                    errors,
                ),
                ICON => icon.set(&key, arg.string(errors), errors),
                CATEGORY => category.set(&key, arg.localized(errors), errors),
                PUBLISHER => publisher.set(&key, arg.string(errors), errors),
                DOCUMENTATION_URL => documentation_url.set(&key, arg.string(errors), errors),
                OAUTH => oauth.set(&key, arg.block(errors), errors),
                CRATE => krate.set(&key, arg.path(errors), errors),
                _ => arg.unknown(PLUGIN_KEYS, errors),
            }
        }

        let namespace = match namespace.get() {
            Some(lit) => checked_namespace(lit.value(), lit.span(), errors),
            None => default_namespace(errors),
        };
        let engine = match engine.get() {
            Some(lit) => {
                if let Err(error) = semver::VersionReq::parse(&lit.value()) {
                    errors.at(lit.span(), format_args!("`{}` is not a semver requirement ({error}): write one such as `>=0.1, <2`", lit.value()));
                }
                lit.value()
            }
            None => {
                errors.at(Span::call_site(), "`plugin!` needs `engine = \"...\"`, the engine versions this plugin supports, such as `engine = \">=0.1, <2\"`");
                String::new()
            }
        };
        let long_description = match (long_description.get(), long_description_file.get()) {
            (Some(text), None) => Some(LongDescription::Inline(text)),
            (None, Some((_, paths))) => Some(LongDescription::Files(paths)),
            (Some(_), Some((key, _))) => {
                errors.at(key.span(), "give the long description inline (`long_description`) or in the crate's files (`long_description_file`), not both");
                None
            }
            (None, None) => None,
        };
        let catalogue = Catalogue {
            long_description,
            // Read once the key is known to be given once.
            icon: icon.get().and_then(|path| Icon::read(path, errors)),
            category: category.get(),
            publisher: publisher.get(),
            documentation_url: documentation_url.get(),
        }
        .checked(errors);
        let display_name = display_name.get();
        let description = description.get();
        for text in [&display_name, &description].into_iter().flatten() {
            text.check(errors);
        }
        Self {
            sdk: krate.get(),
            namespace,
            engine,
            display_name,
            description,
            api_version: api_version.get(),
            state: state.get(),
            system: system
                .get()
                .map(|tokens| System::parse(tokens, errors))
                .unwrap_or_default(),
            catalogue,
            oauth: oauth
                .get()
                .map(|tokens| OAuthProviders::parse(tokens, errors))
                .unwrap_or_default(),
        }
    }
}

fn checked_namespace(namespace: String, span: Span, errors: &mut Errors) -> String {
    if let Err(message) = check_namespace(&namespace).and_then(|()| check_not_reserved(&namespace))
    {
        errors.at(span, message);
    }
    namespace
}

/// The package name in kebab-case, when no `namespace` is given.
fn default_namespace(errors: &mut Errors) -> String {
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let namespace = package.replace('_', "-").to_ascii_lowercase();
    if let Err(message) = check_namespace(&namespace) {
        errors.at(Span::call_site(), format_args!("the namespace defaults to the package name, but {message}; set `namespace = \"...\"`"));
    }
    namespace
}
