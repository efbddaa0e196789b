//! The client (in progress).
