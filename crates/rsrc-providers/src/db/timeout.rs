//! The error of a statement stopped by its time limit. Invariant: every backend says it
//! in the same words, so a client (and a test) cannot tell the backends apart by it.

/// The error of a statement stopped by its time limit: the same words from every backend.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn timed_out(uri: &str, limit: std::time::Duration) -> rsrc::ResourceError {
    rsrc::ResourceError::timeout(
        uri,
        format!(
            "{uri}: the query was stopped after the time limit of {} ms",
            limit.as_millis()
        ),
    )
}
