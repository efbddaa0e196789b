//! [`BoxFuture`]: the one boxed-future type of the crate, for the object-safe traits
//! (providers, the change bus, session stores, handlers).
//!
//! Invariant: a leaf: it imports nothing of the crate, so every module can use it without
//! tying itself to another.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
