//! The built-in file tools, called as the engine calls them: what each does in its
//! project, and the hostile paths every one refuses.

mod common;
mod files;
mod hostile_paths;
mod moves_and_deletions;
