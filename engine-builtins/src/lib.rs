//! The engine's built-in file tools: `read_path_meta`, `get_text_content`,
//! `write_text_content`, `list_files`, `create_directory`, `move_path` and `delete_path`,
//! each scoped to the project root of the agent that calls it.
//!
//! They are a plugin like any other, written with the SDK's macros, and the model of one:
//! a module per tool with its arguments, its result and its function; what the tools
//! share beside them. An engine image links the crate (`use engine_builtins as _;`), and
//! an agent equips the tools once its configuration names a project root:
//!
//! ```toml
//! [agents.site.project]
//! root = "site"
//! quota_bytes = 67108864
//! ```
//!
//! What holds whatever the model sends:
//!
//! - **Nothing outside the root.** A tool gets the root as an open directory handle
//!   ([`Project`](plugin_sdk::project::Project)), never as a path, and opens everything
//!   beneath it with [`cap-std`](cap_std): every component is resolved beneath the handle
//!   (on Linux with `openat2(RESOLVE_BENEATH)`), so `..`, absolute paths and symlinks
//!   that lead out, including one swapped in while a call runs, are refused by the file
//!   system layer and not by string checks. The paths are checked first as well
//!   ([`path`]), so that the model reads why.
//! - **Nothing that blocks or explodes.** A FIFO, a socket or a device is never read; a
//!   file over the project's `max_file_bytes` is refused with its size; bytes that are not
//!   UTF-8, or that hold a NUL, are refused as not text; listings stop at
//!   `max_list_entries` and say so. File work runs on Tokio's blocking pool, and a call's
//!   deadline or cancellation stops it between steps ([`work`]).
//! - **Nothing torn.** A write goes to a temporary file beside its target, is synced, and
//!   is renamed over it; a move is one rename; a directory deleted with its contents is
//!   first renamed out of the way, so its path is gone at once. A quota on the root's
//!   files is checked under a lock that every change through the tools takes. No tool
//!   creates a symbolic link, nor moves, replaces or deletes one by its name; a
//!   directory moved or deleted whole takes the links inside it along (the links, never
//!   what they name).
//! - **No host path in any message.** Refusals name the path as the model wrote it and
//!   say what was wrong in the model's terms ([`refusal`]).

mod lock;
/// The built-in file tools and project roots, for the people who configure them.
#[doc = include_str!("../docs/builtin-tools.md")]
pub mod guide {}
pub mod path;
mod quota;
pub mod refusal;
pub mod tools;
mod walk;
pub mod work;

plugin_sdk::plugin! {
    namespace = "builtin",
    engine = ">=0.1, <2",
    display_name = { "en-US": "Files", "it-IT": "File" },
    description = { "en-US": "Read and write the files of the agent's project.", "it-IT": "Leggi e scrivi i file del progetto dell'agente." },
}
