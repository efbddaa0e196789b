//! The server engine: a [`Router`] of providers, the [`Server`] that speaks both protocol
//! eras over it, and the per-connection [`Session`].
//!
//! The engine is transport-agnostic. [`Server::prepare`] decodes one message (a request's
//! params into its method's type); [`Server::run`] puts a request through the gate and
//! says whether it was refused or runs; [`Server::handle`] does both for transports that
//! need no look in between. A transport drives the returned futures on its own task, so
//! decode → route → provider → encode happens without a thread hop.
//!
//! This file only declares and re-exports. The handle's public methods are in
//! `handle.rs`, the typed host API in `host.rs`, how a server is built in `builder.rs`,
//! its mounts in `router.rs`, and what it holds, with the named methods the rules reach
//! it through, in `inside.rs` (`ServerState`). The rules are functions over that state,
//! never over the handle: the gate (`gate.rs`), decoding and running (`dispatch/`), one
//! handler per method (`handlers/`), the tools bridge (`tools/`, its settings in `tools_config.rs`), fitting results to
//! their revision (`fit.rs`) and replies (`reply.rs`).

mod builder;
mod config;
mod dispatch;
mod fit;
pub mod gate;
mod handle;
mod handlers;
mod host;
mod hosted;
mod inside;
mod reply;
mod router;
mod session;
mod tools;
mod tools_config;

pub use builder::{BuildError, ServerBuilder};
pub use config::ServerConfig;
pub use dispatch::{Handled, Incoming, Notice, Outcome, Prepared, Refusal};
pub use handle::Server;
pub use hosted::{HeldChanges, HostRequest};
pub use reply::Reply;
pub use reply::Streaming;
pub use reply::{Framed, holding};
pub use router::Router;
pub use session::Negotiated;
pub use session::Session;
pub use tools_config::ToolsConfig;
