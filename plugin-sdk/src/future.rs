//! The boxed future the engine's side of the contract returns: a tool's call, a hook's
//! run, a store's answer.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
