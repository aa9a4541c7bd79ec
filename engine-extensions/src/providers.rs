//! Drop-in providers: the files of the providers directory (`providers.d/` beside the
//! configuration), read for the engine, which checks them
//! ([`ProviderFile`](engine_core::provider::ProviderFile)).

use std::path::Path;

use engine_core::config::EngineConfig;
use engine_core::provider::ProviderFile;

use crate::{extension_files, manifest};

/// Every provider file of `config`'s providers directory (`*.json`, not hidden), in
/// path order, each read and parsed: what
/// [`EngineBuilder::provider_files`](engine_core::EngineBuilder::provider_files) and
/// [`Engine::install_providers`](engine_core::Engine::install_providers) take. None for
/// an engine without a configuration file, or a directory that does not exist.
pub fn read_providers(config: &EngineConfig) -> Vec<ProviderFile> {
    config
        .providers_dir()
        .map(|dir| read_dir(&dir))
        .unwrap_or_default()
}

/// Every provider file of `dir`, as [`read_providers`] reads them.
pub(crate) fn read_dir(dir: &Path) -> Vec<ProviderFile> {
    extension_files(dir)
        .into_iter()
        .map(|path| {
            let text = manifest::read_text(&path).map_err(|error| format!("the file {error}"));
            ProviderFile::new(path, text)
        })
        .collect()
}
