//! What the client learned about the server when connecting ([`ServerDescription`]): the
//! revision in use, the server's name, capabilities and instructions.
//!
//! Invariant: it is fixed for the life of the connection: it is what the server said in
//! `server/discover` or `initialize`, never updated afterwards.

use rsrc_protocol::{Implementation, ProtocolVersion, ServerCapabilities};

/// What the client learned about the server when connecting.
#[derive(Debug, Clone)]
pub struct ServerDescription {
    /// The revision in use.
    pub version: ProtocolVersion,
    /// The revision string the server named (for legacy servers older than 2025-06-18
    /// this differs from `version`, which is then the closest modelled revision).
    pub version_string: String,
    /// The server's name and version, if it said.
    pub info: Option<Implementation>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    pub instructions: Option<String>,
}
