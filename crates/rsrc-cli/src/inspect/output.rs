//! The only writers to stdout and stderr of the inspection commands. Invariant: stdout
//! carries only the requested output (a table, JSON, or the resource's bytes); what goes
//! to stderr may quote the server, so it is cleaned first.

use std::io::Write;

use super::failure::{Failure, io_failure};
use super::render;

/// Writes `bytes` to stdout; a closed pipe (`rsrc ls … | head`) is not a failure.
pub(crate) fn stdout_write(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A closed pipe (`rsrc ls … | head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| io_failure("cannot write to stdout", &e)),
    }
}

/// Prints `value` as pretty JSON on stdout, cleaned of what could drive a terminal.
pub(crate) fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<(), Failure> {
    let mut text = render::json_safe(
        serde_json::to_string_pretty(value)
            .map_err(|e| Failure::Usage(format!("cannot encode JSON: {e}")))?,
    );
    text.push('\n');
    stdout_write(text.as_bytes())
}

/// A message on stderr; it may quote the server, so it is cleaned first.
pub(crate) fn warn(message: &str) {
    eprintln!("rsrc: {}", render::clean(message));
}
