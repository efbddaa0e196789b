//! Format alternatives: converters that add a second representation of a file (SEP-2093's
//! "several entries with the same URI = the same content in other formats").
//!
//! A [`Converter`] declares which MIME types it accepts and produces one extra
//! representation from the raw bytes. The provider runs every converter that accepts a
//! file's type, on a blocking thread, under a time limit, and isolates panics: a converter
//! that fails, panics or takes too long only means the alternative is missing — the file
//! itself is still served, and nothing false is ever returned. See
//! `docs/converters.md` for how to add one.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

/// A representation produced by a converter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// Its MIME type, e.g. `text/plain`.
    pub mime_type: String,
    /// Its text.
    pub text: String,
}

/// Produces an alternative representation of files of some types.
pub trait Converter: Send + Sync + 'static {
    /// A short name, for logs.
    fn name(&self) -> &str;

    /// Whether this converter handles files of `mime_type`.
    fn accepts(&self, mime_type: &str) -> bool;

    /// Converts the raw bytes. `Ok(None)` means "nothing useful" (e.g. a scanned PDF with
    /// no text layer).
    fn convert(&self, bytes: &[u8]) -> Result<Option<Converted>, String>;
}

/// Runs `converter` on `bytes` off the async threads, within `limit`; any failure, panic
/// or timeout is logged and yields `None`.
pub(crate) async fn run(
    converter: Arc<dyn Converter>,
    bytes: bytes::Bytes,
    limit: Duration,
) -> Option<Converted> {
    let name = converter.name().to_owned();
    let job = tokio::task::spawn_blocking(move || {
        catch_unwind(AssertUnwindSafe(|| converter.convert(&bytes)))
    });
    match tokio::time::timeout(limit, job).await {
        Ok(Ok(Ok(Ok(converted)))) => converted,
        Ok(Ok(Ok(Err(e)))) => {
            tracing::info!(converter = %name, error = %e, "conversion failed");
            None
        }
        Ok(Ok(Err(_))) | Ok(Err(_)) => {
            tracing::warn!(converter = %name, "a converter panicked; the alternative is omitted");
            None
        }
        Err(_) => {
            tracing::warn!(converter = %name, ?limit, "a converter took too long; the alternative is omitted");
            None
        }
    }
}

/// Extracts the text layer of PDF documents.
#[cfg(feature = "pdf")]
#[derive(Debug, Default, Clone, Copy)]
pub struct PdfText;

#[cfg(feature = "pdf")]
impl Converter for PdfText {
    fn name(&self) -> &str {
        "pdf-text"
    }

    fn accepts(&self, mime_type: &str) -> bool {
        mime_type == "application/pdf"
    }

    fn convert(&self, bytes: &[u8]) -> Result<Option<Converted>, String> {
        let text = pdf_extract::extract_text_from_mem(bytes).map_err(|e| e.to_string())?;
        let text = text.trim();
        Ok((!text.is_empty()).then(|| Converted {
            mime_type: "text/plain".into(),
            text: text.to_owned(),
        }))
    }
}

/// The converters used when none are configured.
pub fn default_converters() -> Vec<Arc<dyn Converter>> {
    #[cfg(feature = "pdf")]
    {
        vec![Arc::new(PdfText)]
    }
    #[cfg(not(feature = "pdf"))]
    {
        Vec::new()
    }
}
