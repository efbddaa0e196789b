//! The Streamable HTTP wire rules both sides follow: the header names and the
//! `=?base64?…?=` sentinel of header values ([`headers`]), and Server-Sent Events, their
//! framing and one incremental parser ([`sse`]).
//!
//! Invariant: each rule is written once, here; the server transport, the client and the
//! test peers encode and decode through these functions, so the two ends of a connection
//! cannot drift apart. Nothing here does I/O or depends on an HTTP library: names are
//! `&'static str`, values plain text and bytes.

pub mod headers;
pub mod sse;
