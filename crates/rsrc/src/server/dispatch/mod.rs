//! From one encoded message to what must be sent back, in two steps a transport can look
//! between:
//!
//! 1. [`Server::prepare`](crate::Server::prepare) decodes a message once: a request's
//!    params go into the type its method declares (`Method::Params`), so a transport
//!    can read the request's id, method, revision and mirrored name from the typed
//!    request (the [`Prepared`] request) instead of parsing the body again.
//! 2. [`Server::run`](crate::Server::run) puts it through the gate ([`super::gate`]) and
//!    either refuses it ([`Outcome::Refused`]: nothing ran) or runs it, wrapping its
//!    handler with registration in the session, cancellation and panic isolation.
//!
//! Invariants: notifications are never answered; a request is answered exactly once, or
//! not at all if the client cancelled it; a panic in a handler or provider becomes `-32603`
//! for that request only; every result is fitted to its revision in one place
//! ([`Fit`](super::fit::Fit)).

mod handled;
mod prepare;
mod run;

pub use handled::Handled;
pub(crate) use prepare::ENGINE_METHODS;
pub use prepare::{Incoming, Notice, Prepared};
pub(super) use prepare::{notify, oversized, prepare, prepare_typed};
pub(super) use run::run;
pub use run::{Outcome, Refusal};
