//! What a transport does with one message when it needs no look between decoding and
//! running ([`Handled`]). Invariant: a cancelled request's work yields `None`, and then no
//! reply follows.

use crate::future::BoxFuture;
use crate::server::reply::Reply;

/// What a transport does with one message, when it needs no look between decoding and
/// running (see [`Server::handle`](crate::Server::handle)).
pub enum Handled {
    /// Nothing to send: a notification, or a response from the client.
    None,
    /// A reply, ready now.
    Reply(Reply),
    /// Work to drive to completion on the caller's task. It yields the reply, or `None`
    /// when the client cancelled the request (no reply must follow then).
    Pending(BoxFuture<'static, Option<Reply>>),
}

impl std::fmt::Debug for Handled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Handled::None => f.write_str("Handled::None"),
            Handled::Reply(r) => f.debug_tuple("Handled::Reply").field(r).finish(),
            Handled::Pending(_) => f.write_str("Handled::Pending(..)"),
        }
    }
}
