//! Why a client call failed ([`ClientError`]): the server's JSON-RPC error, a timeout, a
//! closed connection, an answer that does not fit the protocol, an I/O or HTTP failure, or
//! a call the server does not offer.
//!
//! Invariant: a server's error object is kept whole ([`ClientError::rpc`]), never
//! flattened to text, so callers can tell `-32601` and `-32002` from the rest.

use rsrc_protocol::jsonrpc::{ErrorCode, ErrorObject};

/// Why a client call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with an error.
    Rpc(ErrorObject),
    /// No answer within the timeout.
    Timeout,
    /// The connection is closed.
    Closed,
    /// The server's answer does not fit the protocol.
    Protocol(String),
    /// An I/O failure (e.g. spawning the server).
    Io(std::io::Error),
    /// The call needs something the server does not declare (rsrc's SEP-2093
    /// extension): nothing was sent.
    NotOffered(String),
    /// An HTTP error status without a JSON-RPC error in the body.
    Http {
        /// The status code.
        status: u16,
        /// The beginning of the body.
        message: String,
    },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Rpc(e) => write!(
                f,
                "the server returned an error: {} ({})",
                e.message, e.code
            ),
            ClientError::Timeout => f.write_str("the server did not answer in time"),
            ClientError::Closed => f.write_str("the connection to the server is closed"),
            ClientError::Protocol(m) => write!(f, "protocol error: {m}"),
            ClientError::Io(e) => write!(f, "{e}"),
            ClientError::NotOffered(m) => f.write_str(m),
            ClientError::Http { status, message } if message.is_empty() => {
                write!(f, "HTTP {status}")
            }
            ClientError::Http { status, message } => write!(f, "HTTP {status}: {message}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> Self {
        ClientError::Io(e)
    }
}

impl ClientError {
    /// The server's error object, if the server answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the server said it does not know the method.
    pub fn is_method_not_found(&self) -> bool {
        self.rpc()
            .is_some_and(|e| e.code == ErrorCode::METHOD_NOT_FOUND)
    }
}
