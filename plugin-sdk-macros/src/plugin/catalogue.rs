//! The catalogue fields of `plugin!` (seed 003's marketplace fields of `plugin.json`):
//! `long_description` (inline, or `long_description_file`), `icon`, `category`,
//! `publisher` and `documentation_url`. Files are the crate's own, read here to be
//! checked, and embedded with `include_str!`/`include_bytes!` so that a change to one
//! rebuilds the crate.

use std::path::{Component, Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

use crate::errors::Errors;
use crate::localized::{expand_option, Localized};

/// The largest icon, in bytes (32 KiB).
const MAX_ICON_BYTES: usize = 32 * 1024;

/// The largest long description file, in bytes: a few paragraphs.
const MAX_LONG_DESCRIPTION_BYTES: usize = 64 * 1024;

/// The longest publisher name, in characters.
const MAX_PUBLISHER_CHARS: usize = 100;

/// The catalogue fields as `plugin!` gave them.
#[derive(Default)]
pub struct Catalogue {
    pub long_description: Option<LongDescription>,
    pub icon: Option<Icon>,
    pub category: Option<Localized>,
    pub publisher: Option<LitStr>,
    pub documentation_url: Option<LitStr>,
}

/// A long description: the text, or the crate's files that hold it (a path for every
/// locale, or one per tag).
pub enum LongDescription {
    Inline(Localized),
    Files(Localized),
}

/// An icon file of the crate, and its media type.
pub struct Icon {
    path: LitStr,
    media_type: &'static str,
}

impl Catalogue {
    /// Checks every field, reading the files they name; a file it reported is left out,
    /// so that the expansion reports nothing more about it.
    pub fn checked(mut self, errors: &mut Errors) -> Self {
        match &self.long_description {
            Some(LongDescription::Inline(text)) => text.check(errors),
            Some(LongDescription::Files(paths)) => {
                // Each path's own error is the file's, below.
                paths.check_tags(errors);
                let mut readable = true;
                for path in paths.texts() {
                    let value = path.value();
                    let read = long_description_type(&value)
                        .and_then(|()| {
                            let max = MAX_LONG_DESCRIPTION_BYTES;
                            crate_file(&crate_root(), &value, max, "a long description")
                        })
                        .and_then(|bytes| check_long_description(&value, bytes));
                    if let Err(message) = read {
                        errors.at(path.span(), message);
                        readable = false;
                    }
                }
                if !readable {
                    self.long_description = None;
                }
            }
            None => {}
        }
        if let Some(category) = &self.category {
            category.check(errors);
        }
        if let Some(publisher) = &self.publisher {
            if let Err(message) = check_publisher(&publisher.value()) {
                errors.at(publisher.span(), message);
            }
        }
        if let Some(url) = &self.documentation_url {
            if !is_https_url(&url.value()) {
                errors.at(url.span(), format_args!("`{}` is not an https URL: `documentation_url` is a link people open from the catalogue, such as `https://docs.example.com/plugin`", url.value()));
            }
        }
        self
    }

    /// The `Catalogue` expression of the manifest.
    pub fn expand(&self, sdk: &syn::Path) -> TokenStream {
        let private = quote!(#sdk::__private);
        let long_description = match &self.long_description {
            Some(LongDescription::Inline(text)) => expand_option(Some(text), sdk),
            Some(LongDescription::Files(paths)) => {
                let text = paths.expand_with(sdk, |path| {
                    let file = in_crate(path);
                    quote!(::core::include_str!(#file))
                });
                quote!(::core::option::Option::Some(#text))
            }
            None => quote!(::core::option::Option::None),
        };
        let icon = match &self.icon {
            Some(Icon { path, media_type }) => {
                let bytes = in_crate(path);
                quote!(::core::option::Option::Some(#private::Icon {
                    media_type: #media_type,
                    bytes: ::core::include_bytes!(#bytes),
                }))
            }
            None => quote!(::core::option::Option::None),
        };
        let category = expand_option(self.category.as_ref(), sdk);
        let publisher = option_str(self.publisher.as_ref());
        let documentation_url = option_str(self.documentation_url.as_ref());
        quote!(#private::Catalogue {
            long_description: #long_description,
            icon: #icon,
            category: #category,
            publisher: #publisher,
            documentation_url: #documentation_url,
        })
    }
}

impl Icon {
    /// The icon at `path`, a file of the crate, checked; `None` after reporting why not.
    pub fn read(path: LitStr, errors: &mut Errors) -> Option<Self> {
        let value = path.value();
        let checked = icon_type(&value).and_then(|kind| {
            let bytes = crate_file(&crate_root(), &value, MAX_ICON_BYTES, "an icon")?;
            check_icon(&value, kind, &bytes)
        });
        match checked {
            Ok(media_type) => Some(Self { path, media_type }),
            Err(message) => {
                errors.at(path.span(), message);
                None
            }
        }
    }
}

/// The path literal `path` as the crate's file, for `include_*!` (relative to the file
/// the macro expands in otherwise).
fn in_crate(path: &LitStr) -> TokenStream {
    let value = path.value();
    quote!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #value))
}

fn option_str(text: Option<&LitStr>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

/// The crate's directory, where Cargo.toml is: what file paths are relative to.
fn crate_root() -> Result<PathBuf, String> {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .ok_or_else(|| {
            "`CARGO_MANIFEST_DIR` is not set: build the crate with Cargo, which sets it".to_owned()
        })
}

/// The bytes of the file `path` of the crate at `root`: relative, written with `/`,
/// inside the crate's directory (a link out of it included), a file of at most `max`
/// bytes (checked before it is read); `what` it is names it in errors.
fn crate_file(
    root: &Result<PathBuf, String>,
    path: &str,
    max: usize,
    what: &str,
) -> Result<Vec<u8>, String> {
    let relative = Path::new(path);
    let escapes = relative
        .components()
        .any(|part| !matches!(part, Component::Normal(_) | Component::CurDir));
    // A `\` is a separator on Windows only: the crate would build there, not elsewhere.
    if path.is_empty() || escapes || path.contains('\\') {
        return Err(format!("`{path}` is not a path inside the crate: give it relative to the crate's directory (where Cargo.toml is), with `/`, without `..`"));
    }
    let root = root.clone()?;
    let missing = |error: std::io::Error| {
        match error.kind() {
        std::io::ErrorKind::NotFound => format!("`{path}` is not a file of the crate: give its path from the directory of the crate's Cargo.toml"),
        _ => format!("`{path}` could not be read: {error}"),
    }
    };
    let file = root.join(relative).canonicalize().map_err(missing)?;
    let root = root
        .canonicalize()
        .map_err(|error| format!("the crate's directory could not be read: {error}"))?;
    if !file.starts_with(&root) {
        return Err(format!(
            "`{path}` leads out of the crate's directory: give a file of the crate"
        ));
    }
    let metadata = std::fs::metadata(&file).map_err(missing)?;
    if !metadata.is_file() {
        return Err(format!(
            "`{path}` is not a file: give the crate's file of {what}"
        ));
    }
    if metadata.len() > max as u64 {
        return Err(format!(
            "`{path}` is {} bytes, and {what} is at most {max}",
            metadata.len()
        ));
    }
    std::fs::read(&file).map_err(missing)
}

/// Whether `path` names a long description file: Markdown or text, by its extension.
fn long_description_type(path: &str) -> Result<(), String> {
    match extension(path).as_str() {
        "md" | "txt" => Ok(()),
        _ => Err(format!("`{path}` is not a Markdown or text file: a long description is a `.md` or `.txt` file of the crate")),
    }
}

/// A long description file's `bytes`, read from `path`: UTF-8 without control
/// characters but line breaks and tabs, not empty.
fn check_long_description(path: &str, bytes: Vec<u8>) -> Result<(), String> {
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(format!("`{path}` is not UTF-8 text"));
    };
    if text.trim().is_empty() {
        return Err(format!(
            "`{path}` is empty: write the description, or leave `long_description_file` out"
        ));
    }
    // A terminal or a page shows it: no escape sequence of the file's reaches them.
    if text.contains(|c: char| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
        return Err(format!(
            "`{path}` holds control characters: a long description is text"
        ));
    }
    Ok(())
}

/// A publisher's name: shown next to the plugin's, on one line.
fn check_publisher(name: &str) -> Result<(), String> {
    if name.trim().is_empty()
        || name.chars().count() > MAX_PUBLISHER_CHARS
        || name.contains(char::is_control)
    {
        return Err(format!("`publisher` is a name shown next to the plugin's: 1 to {MAX_PUBLISHER_CHARS} characters on one line"));
    }
    Ok(())
}

/// What an icon may be: its extension, its media type, and whether bytes are of it.
type IconType = (&'static str, &'static str, fn(&[u8]) -> bool);

const ICON_TYPES: &[IconType] = &[
    ("png", "image/png", |bytes| {
        bytes.starts_with(b"\x89PNG\r\n\x1a\n")
    }),
    ("webp", "image/webp", |bytes| {
        bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP"
    }),
    ("svg", "image/svg+xml", is_svg),
];

/// The type of the icon at `path`, by its extension.
fn icon_type(path: &str) -> Result<&'static IconType, String> {
    let extension = extension(path);
    ICON_TYPES
        .iter()
        .find(|(of, _, _)| *of == extension)
        .ok_or_else(|| {
            format!("`{path}` is not a PNG, WebP or SVG file: an icon is one of those (`.png`, `.webp`, `.svg`)")
        })
}

/// The media type of the icon `bytes`, read from `path`, of `kind` by its extension:
/// its content must be what the extension says.
fn check_icon(path: &str, kind: &IconType, bytes: &[u8]) -> Result<&'static str, String> {
    let (_, media_type, fits) = *kind;
    if !fits(bytes) {
        return Err(format!(
            "`{path}` does not hold what its extension says: its bytes are not {media_type}"
        ));
    }
    Ok(media_type)
}

/// Whether `bytes` are an SVG document: UTF-8 text whose root element is `<svg`.
fn is_svg(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    // The XML declaration, comments and a doctype may come before the root.
    loop {
        let skip = if rest.starts_with("<?") {
            rest.find("?>").map(|end| end + 2)
        } else if rest.starts_with("<!--") {
            rest.find("-->").map(|end| end + 3)
        } else if rest.starts_with("<!") {
            rest.find('>').map(|end| end + 1)
        } else {
            break;
        };
        let Some(skip) = skip else { return false };
        rest = rest[skip..].trim_start();
    }
    let root = rest.starts_with("<svg")
        && rest[4..].starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/');
    // Shown in an `<img>`, an SVG's script never runs; a page that inlines it would run
    // one: none is accepted.
    let lower = rest.to_ascii_lowercase();
    root && !lower.contains("<script") && !lower.contains("javascript:")
}

/// Whether `url` is an https URL with a host (a name or an address, and a port), and
/// neither credentials nor spaces.
pub(super) fn is_https_url(url: &str) -> bool {
    let host = url.strip_prefix("https://").map(|rest| {
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        &rest[..end]
    });
    let host_fits = |host: &str| {
        let (name, port) = host.split_once(':').unwrap_or((host, "0"));
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !port.is_empty()
            && port.chars().all(|c| c.is_ascii_digit())
    };
    host.is_some_and(host_fits) && !url.contains(|c: char| c.is_whitespace() || c.is_control())
}

/// `path`'s extension, lowercase.
fn extension(path: &str) -> String {
    Path::new(path)
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_icon_is_what_its_extension_says_without_a_script() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let icon = |path: &str, bytes: &[u8]| {
            icon_type(path).and_then(|kind| check_icon(path, kind, bytes))
        };
        assert_eq!(icon("icon.png", png), Ok("image/png"));
        assert_eq!(icon("ICON.PNG", png), Ok("image/png"));
        assert_eq!(
            icon("icon.webp", b"RIFF\x10\0\0\0WEBPVP8 "),
            Ok("image/webp")
        );
        assert!(icon("icon.webp", b"RIFF").is_err());
        let svg = b"\xef\xbb\xbf<?xml version=\"1.0\"?>\n<!-- logo --><svg xmlns=\"http://www.w3.org/2000/svg\"/>";
        assert_eq!(icon("icon.svg", svg), Ok("image/svg+xml"));
        assert_eq!(icon("icon.svg", b"<svg/>"), Ok("image/svg+xml"));
        // A PNG named `.svg`, text named `.png`, an HTML page named `.svg`.
        assert!(icon("icon.svg", png).unwrap_err().contains("image/svg+xml"));
        assert!(icon("icon.png", b"<svg/>")
            .unwrap_err()
            .contains("image/png"));
        assert!(icon("icon.svg", b"<html><svg></svg></html>").is_err());
        assert!(icon("icon.svgz", svg)
            .unwrap_err()
            .contains("not a PNG, WebP or SVG"));
        // An SVG with a script, however it is spelt.
        assert!(icon("icon.svg", b"<svg><SCRIPT>alert(1)</SCRIPT></svg>").is_err());
        assert!(icon("icon.svg", b"<svg><a href=\"JavaScript:alert(1)\"/></svg>").is_err());
    }

    /// A scratch directory holding a crate directory with `files`, and a file beside it.
    fn scratch(name: &str, files: &[(&str, &[u8])]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("catalogue-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("crate/catalogue")).unwrap();
        std::fs::write(dir.join("outside.svg"), b"<svg/>").unwrap();
        for (path, bytes) in files {
            std::fs::write(dir.join("crate").join(path), bytes).unwrap();
        }
        dir
    }

    #[test]
    fn a_crate_file_is_inside_the_crate_and_within_its_size_before_it_is_read() {
        let big = [b'a'; 100];
        let dir = scratch(
            "files",
            &[("catalogue/icon.svg", b"<svg/>"), ("big.md", &big)],
        );
        let root = Ok(dir.join("crate"));
        let read = |path: &str, max: usize| crate_file(&root, path, max, "an icon");
        assert_eq!(read("catalogue/icon.svg", 10).unwrap(), b"<svg/>");
        assert_eq!(read("./catalogue/icon.svg", 10).unwrap(), b"<svg/>");
        for outside in ["../outside.svg", "/etc/passwd", "catalogue\\icon.svg", ""] {
            let error = read(outside, 10).unwrap_err();
            assert!(
                error.contains("not a path inside the crate"),
                "{outside}: {error}"
            );
        }
        let missing = read("catalogue/missing.svg", 10).unwrap_err();
        assert!(missing.contains("not a file of the crate"), "{missing}");
        assert!(read("catalogue", 10).unwrap_err().contains("is not a file"));
        let large = read("big.md", 99).unwrap_err();
        assert!(
            large.contains("is 100 bytes, and an icon is at most 99"),
            "{large}"
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("outside.svg"), dir.join("crate/link.svg"))
                .unwrap();
            let out = read("link.svg", 10).unwrap_err();
            assert!(out.contains("leads out of the crate"), "{out}");
        }
        let unset = Err("`CARGO_MANIFEST_DIR` is not set".to_owned());
        let error = crate_file(&unset, "catalogue/icon.svg", 10, "an icon").unwrap_err();
        assert!(error.contains("not set"), "{error}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_long_description_file_is_markdown_or_text_and_holds_text() {
        assert!(long_description_type("about.md").is_ok());
        assert!(long_description_type("ABOUT.TXT").is_ok());
        assert!(long_description_type("about.html").is_err());
        let check = |bytes: &[u8]| check_long_description("a.md", bytes.to_vec());
        assert!(check(b"Two paragraphs.\r\n\n\tIndented.").is_ok());
        assert!(check(b" \n ").unwrap_err().contains("is empty"));
        assert!(check(b"\xff\xfe").unwrap_err().contains("not UTF-8"));
        assert!(check(b"red \x1b[31m")
            .unwrap_err()
            .contains("control characters"));
    }

    #[test]
    fn a_publisher_is_one_line_of_at_most_100_characters() {
        assert!(check_publisher("Acme Inc.").is_ok());
        assert!(check_publisher(&"é".repeat(MAX_PUBLISHER_CHARS)).is_ok());
        for name in ["", "  ", "Acme\nInc.", &"a".repeat(MAX_PUBLISHER_CHARS + 1)] {
            assert!(check_publisher(name).is_err(), "{name:?}");
        }
    }

    #[test]
    fn a_documentation_url_is_https_with_a_host() {
        assert!(is_https_url("https://docs.example.com/crm"));
        assert!(is_https_url("https://docs.example.com"));
        assert!(is_https_url("https://docs.example.com:8443/crm?x=1#top"));
        for url in [
            "http://docs.example.com",
            "https://",
            "https:///path",
            "docs.example.com",
            "https://a b.com",
            "javascript:alert(1)",
            "https://user:pw@host",
            "https://@",
            "https://:443",
            "https://a\\@b",
            "https://host:",
            "https://host:x",
        ] {
            assert!(!is_https_url(url), "{url}");
        }
    }
}
