//! A crate's module tree as the compiler sees it, read with `syn`, and the imports between
//! its modules: every `crate::`, `super::` and `self::` path, in `use` items, in code and in
//! macro input, resolved through the `use` items it passes (so `crate::Format` counts as an
//! import of the module that defines `Format`, not of the crate root).
//!
//! Items under `#[cfg(test)]` are left out: a test module may use any layer as a fixture,
//! and no build of the crate's users contains it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A module's path below the crate root (empty for the root).
pub type ModPath = Vec<String>;

/// One import: from the module a path is written in to the module it names.
#[derive(Debug)]
pub struct Import {
    pub from: ModPath,
    pub to: ModPath,
    /// The file the path is written in, relative to the crate's directory.
    pub file: String,
}

/// What a name a `use` item binds stands for.
#[derive(Clone, Debug)]
enum Binding {
    /// A path inside the crate, from its root.
    Local(ModPath),
    /// Something of another crate.
    Foreign,
}

#[derive(Default)]
struct Module {
    children: BTreeSet<String>,
    bindings: BTreeMap<String, Binding>,
    /// Paths written in the module, from the crate root, with the file they are in.
    paths: Vec<(ModPath, String)>,
}

/// The crate at `dir`, its root module read from `root` (`src/lib.rs` or `src/main.rs`).
pub struct Crate {
    modules: BTreeMap<ModPath, Module>,
}

impl Crate {
    pub fn read(dir: &Path, root: &Path) -> Crate {
        let mut krate = Crate {
            modules: BTreeMap::new(),
        };
        let file = parse(root);
        let reader = Reader {
            crate_dir: dir,
            file: root.to_path_buf(),
            children_dir: root.parent().unwrap().to_path_buf(),
        };
        reader.items(&mut krate, Vec::new(), &file.items);
        krate
    }

    /// The modules declared in the crate root.
    pub fn top_level(&self) -> impl Iterator<Item = &String> {
        self.modules[&Vec::new()].children.iter()
    }

    /// Every import between two modules of the crate, each with the file it is written in.
    pub fn imports(&self) -> Vec<Import> {
        let mut imports = Vec::new();
        for (from, module) in &self.modules {
            for (path, file) in &module.paths {
                let to = self.resolve(path.clone());
                imports.push(Import {
                    from: from.clone(),
                    to,
                    file: file.clone(),
                });
            }
        }
        imports
    }

    /// The module `path` names an item of, following `use` bindings.
    fn resolve(&self, mut path: ModPath) -> ModPath {
        // A binding may lead to another binding; a chain longer than this is a cycle of
        // re-exports, which the compiler refuses anyway.
        for _ in 0..16 {
            let mut module = Vec::new();
            let mut rest = path.iter();
            let mut followed = None;
            for segment in rest.by_ref() {
                let here = &self.modules[&module];
                if here.children.contains(segment) {
                    module.push(segment.clone());
                    continue;
                }
                if let Some(binding) = here.bindings.get(segment) {
                    followed = Some(binding.clone());
                }
                break;
            }
            match followed {
                Some(Binding::Local(target)) => {
                    path = target.into_iter().chain(rest.cloned()).collect();
                }
                Some(Binding::Foreign) | None => return module,
            }
        }
        Vec::new()
    }
}

/// Reads one file's items into the tree.
struct Reader<'a> {
    crate_dir: &'a Path,
    file: PathBuf,
    /// Where the files of this module's `mod name;` children are.
    children_dir: PathBuf,
}

impl Reader<'_> {
    fn items(&self, krate: &mut Crate, module: ModPath, items: &[syn::Item]) {
        krate.modules.entry(module.clone()).or_default();
        let file = self
            .file
            .strip_prefix(self.crate_dir)
            .unwrap()
            .display()
            .to_string();
        let mut paths = Paths {
            module: &module,
            children: items.iter().filter_map(module_name).collect(),
            found: Vec::new(),
        };
        for item in items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            match item {
                syn::Item::Mod(child) => self.child(krate, &module, child),
                syn::Item::Use(item) => {
                    let mut bindings = Vec::new();
                    use_tree(
                        &module,
                        &paths.children,
                        Vec::new(),
                        &item.tree,
                        &mut |p, b| {
                            paths.found.extend(p);
                            bindings.extend(b);
                        },
                    );
                    let here = krate.modules.get_mut(&module).unwrap();
                    here.bindings.extend(bindings);
                }
                _ => paths.visit_item(item),
            }
        }
        let here = krate.modules.get_mut(&module).unwrap();
        here.paths
            .extend(paths.found.into_iter().map(|p| (p, file.clone())));
    }

    fn child(&self, krate: &mut Crate, module: &ModPath, child: &syn::ItemMod) {
        let name = child.ident.to_string();
        let mut path = module.clone();
        path.push(name.clone());
        krate
            .modules
            .get_mut(module)
            .unwrap()
            .children
            .insert(name.clone());
        if let Some((_, items)) = &child.content {
            let reader = Reader {
                crate_dir: self.crate_dir,
                file: self.file.clone(),
                children_dir: self.children_dir.join(&name),
            };
            return reader.items(krate, path, items);
        }
        let (file, children_dir) = match path_attribute(&child.attrs) {
            Some(relative) => {
                let file = self.children_dir.join(relative);
                let dir = file.with_extension("");
                (file, dir)
            }
            None => {
                let flat = self.children_dir.join(format!("{name}.rs"));
                if flat.exists() {
                    (flat, self.children_dir.join(&name))
                } else {
                    let dir = self.children_dir.join(&name);
                    (dir.join("mod.rs"), dir)
                }
            }
        };
        let parsed = parse(&file);
        let reader = Reader {
            crate_dir: self.crate_dir,
            file,
            children_dir,
        };
        reader.items(krate, path, &parsed.items);
    }
}

fn parse(file: &Path) -> syn::File {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn module_name(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Mod(child) if !is_test_only(&child.attrs) => Some(child.ident.to_string()),
        _ => None,
    }
}

fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(value) if value.path.is_ident("path") => match &value.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Some(text.value()),
            _ => None,
        },
        _ => None,
    })
}

/// `#[cfg(test)]`, or `#[cfg(all(.., test, ..))]`: only compiled for the crate's own
/// tests. (`not(test)` and `any(test, ..)` are compiled in other builds too.)
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && matches!(&attr.meta, syn::Meta::List(list) if requires_test(list.tokens.clone()))
    })
}

fn requires_test(predicate: TokenStream) -> bool {
    let tokens: Vec<TokenTree> = predicate.into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Ident(ident)] => ident == "test",
        [TokenTree::Ident(all), TokenTree::Group(group)] if all == "all" => {
            // `all(a, b, ..)`: test-only when one of its top-level predicates is.
            let mut predicate = TokenStream::new();
            let mut found = false;
            for token in group.stream() {
                match &token {
                    TokenTree::Punct(comma) if comma.as_char() == ',' => {
                        found |= requires_test(std::mem::take(&mut predicate));
                    }
                    _ => predicate.extend([token]),
                }
            }
            found || requires_test(predicate)
        }
        _ => false,
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Walks a `use` tree: gives each path it names inside the crate (from the root) and each
/// name it binds. `children` are the modules declared in `module`, which a `use` path may
/// start with (2018 paths).
fn use_tree(
    module: &ModPath,
    children: &BTreeSet<String>,
    prefix: Vec<String>,
    tree: &syn::UseTree,
    found: &mut dyn FnMut(Option<ModPath>, Option<(String, Binding)>),
) {
    let push = |segment: String| {
        let mut path = prefix.clone();
        path.push(segment);
        path
    };
    match tree {
        syn::UseTree::Path(p) => {
            use_tree(module, children, push(p.ident.to_string()), &p.tree, found)
        }
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_tree(module, children, prefix.clone(), tree, found);
            }
        }
        syn::UseTree::Name(name) => {
            let bound = if name.ident == "self" {
                prefix.last().cloned()
            } else {
                Some(name.ident.to_string())
            };
            let full = if name.ident == "self" {
                prefix.clone()
            } else {
                push(name.ident.to_string())
            };
            bind(module, children, full, bound, found);
        }
        syn::UseTree::Rename(rename) => {
            let full = if rename.ident == "self" {
                prefix.clone()
            } else {
                push(rename.ident.to_string())
            };
            bind(
                module,
                children,
                full,
                Some(rename.rename.to_string()),
                found,
            );
        }
        syn::UseTree::Glob(_) => {
            if let Some(path) = absolute(module, children, &prefix) {
                found(Some(path), None);
            }
        }
    }
}

fn bind(
    module: &ModPath,
    children: &BTreeSet<String>,
    full: Vec<String>,
    bound: Option<String>,
    found: &mut dyn FnMut(Option<ModPath>, Option<(String, Binding)>),
) {
    let local = absolute(module, children, &full);
    let binding = match &local {
        Some(path) => Binding::Local(path.clone()),
        None => Binding::Foreign,
    };
    found(local, bound.map(|name| (name, binding)));
}

/// `path` as written in `module`, from the crate root; `None` for another crate's.
fn absolute(module: &ModPath, children: &BTreeSet<String>, path: &[String]) -> Option<ModPath> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.clone(),
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        name if children.contains(name) => {
            let mut base = module.clone();
            base.push(name.to_owned());
            base
        }
        _ => return None,
    };
    let mut rest = rest.iter().peekable();
    while rest.peek().map(|s| s.as_str()) == Some("super") {
        rest.next();
        base.pop()?;
    }
    base.extend(rest.cloned());
    Some(base)
}

/// The `crate::`, `super::` and `self::` paths in an item's code and macro input.
struct Paths<'a> {
    module: &'a ModPath,
    children: BTreeSet<String>,
    found: Vec<ModPath>,
}

impl Paths<'_> {
    fn written(&mut self, segments: Vec<String>) {
        let relative = matches!(
            segments.first().map(String::as_str),
            Some("crate" | "super" | "self")
        );
        if relative && segments.len() > 1 {
            if let Some(path) = absolute(self.module, &self.children, &segments) {
                self.found.push(path);
            }
        }
    }

    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Ident(ident) if ident == "crate" || ident == "super" => {
                    let mut segments = vec![ident.to_string()];
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        i += 3;
                    }
                    self.written(segments);
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test_only(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let (module, children) = (self.module.clone(), self.children.clone());
        use_tree(
            &module,
            &children,
            Vec::new(),
            &item.tree,
            &mut |path, _| {
                self.found.extend(path);
            },
        );
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.written(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
    }
}
