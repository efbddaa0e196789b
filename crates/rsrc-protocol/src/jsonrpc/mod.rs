//! The JSON-RPC 2.0 envelope, decoded in two stages.
//!
//! Stage one ([`RawMessage`]) is lenient: every member is optional and `params`,
//! `result` and `error` stay raw slices of the input. Stage two ([`RawMessage::classify`])
//! turns it into a [`Message`] (request, notification or response) and reports exactly
//! what is wrong otherwise. Nothing here is an untagged union, so every error names the
//! member at fault.
//!
//! This file only declares and re-exports: the envelope and its decoding are in
//! `message.rs`, ids in `id.rs`, error objects in `error.rs`, writing in `write.rs`.
//!
//! Invariants:
//! - A [`RequestId`] is a string or an `i64` and is echoed exactly as received: `"7"` and
//!   `7` are different ids. Fractional numbers, `null` and integers outside `i64` are never
//!   accepted as request ids (they would be rounded or ambiguous on the way back).
//! - A member that appears twice makes the message invalid; keys are matched
//!   case-sensitively, so `"ID"` is an unknown member, never the id.

mod error;
mod id;
mod message;
mod write;

pub use error::{ErrorCode, ErrorObject};
pub use id::{IdField, RequestId, id_from_prefix};
pub use message::{
    DecodeError, JSONRPC_VERSION, Message, Notification, RawMessage, Request, Response, decode,
    decode_params,
};
pub use write::{write_error, write_notification, write_request, write_result};
