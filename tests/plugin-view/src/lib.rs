//! No code: the cases under `ui/` are this crate's test (see `tests/ui.rs`).
