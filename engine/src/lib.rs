//! The engine for people building an image: the kernel ([`engine_core`], re-exported
//! whole) and the backends an image opens its configured parts with, each a crate behind
//! a feature of this one, as sqlx's drivers are:
//!
//! | feature | crate | opens |
//! |---|---|---|
//! | `sqlite` (default) | [`sqlite`] | conversations and the knowledge base under the data directory |
//! | `postgres` | [`postgres`] | every store on one PostgreSQL, shared by replicas (`[database]`) |
//! | `http` (default) | [`providers`] | model providers and the tools' model gateway over HTTP |
//!
//! [`default_backends`] is the one list of them: an image hands it to the builder (or to
//! `engine_cli::run`), and a part its configuration asks for without the backend's feature
//! is refused at start-up, naming the feature's crate.
//!
//! ```
//! let engine = engine::Engine::builder()
//!     .backends(engine::default_backends())
//!     .build()
//!     .expect("an engine with no configuration opens nothing");
//! # drop(engine);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use engine_core::*;

/// Building an image by hand, and what an image's Dockerfile does.
#[doc = include_str!("../docs/images.md")]
pub mod guide {}

#[cfg(feature = "postgres")]
pub use engine_postgres as postgres;
#[cfg(feature = "http")]
pub use engine_providers as providers;
#[cfg(feature = "sqlite")]
pub use engine_sqlite as sqlite;

/// Every backend this build has, by its features: the only list of them, so that turning
/// a feature on is all it takes to open what it backs.
pub fn default_backends() -> Backends {
    let backends = Backends::NONE;
    #[cfg(feature = "sqlite")]
    let backends = engine_sqlite::backends(backends);
    #[cfg(feature = "postgres")]
    let backends = engine_postgres::backends(backends);
    #[cfg(feature = "http")]
    let backends = engine_providers::backends(backends);
    backends
}
