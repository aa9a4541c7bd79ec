//! The SDK's own tests, in one binary that links the example plugins and this crate's
//! fixtures: what the macros register and emit, their schemas against snapshots and the
//! OpenAI Agents SDK's strict check, the reserved names, and the compile-fail suite.

mod docs;
mod layers;
mod reserved_names;
mod schemas;
mod support;
mod tools;
mod ui;
mod versions;
