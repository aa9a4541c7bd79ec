//! Stream assembly fixtures.
