//! Why an inspection command failed, and so its exit code: 1 when the server answered
//! with an error (its code and message are kept), 2 for bad usage or a server that could
//! not be reached or stopped answering. Invariant: a server's refusal (a JSON-RPC error,
//! or a feature it does not offer) is never reported as a usage error.

use rsrc_client::ClientError;

/// Why a command failed, and so its exit code.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Exit 1: the server answered with an error.
    Server(String),
    /// Exit 2: bad usage, or the server could not be reached or stopped answering.
    Usage(String),
}

impl Failure {
    /// The process exit code.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Failure::Server(_) => 1,
            Failure::Usage(_) => 2,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Server(m) | Failure::Usage(m) => f.write_str(m),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        // What the server does not offer is the server's answer, as -32601 would be.
        if let ClientError::NotOffered(m) = &e {
            return Failure::Server(m.clone());
        }
        match e.rpc() {
            Some(err) => {
                let mut m = format!("server error {}: {}", err.code.0, err.message);
                if let Some(data) = &err.data {
                    m.push_str(&format!(" ({data})"));
                }
                Failure::Server(m)
            }
            None => Failure::Usage(e.to_string()),
        }
    }
}

/// A failure to do `what` on this side (a file, stdout, the runtime): exit 2.
pub(crate) fn io_failure(what: &str, e: &std::io::Error) -> Failure {
    Failure::Usage(format!("{what}: {e}"))
}
