//! What needs no plugin of this binary's own: the engine of a binary that links the two
//! example plugins (its catalogs, its registry and the start-up rules), and the
//! providers' stream assembly, which links nothing. The other test binaries of this crate
//! each define a plugin, and what an engine finds linked is what they check, so they stay
//! apart.

mod backends;
mod catalogs;
mod registry;
mod stream_assembly;
