//! What a file's content is: text or binary, and its MIME type. Shared by the providers
//! that serve files (`fs`, `git`, `skills`), so that the same bytes under the same name
//! read the same whichever serves them.
//!
//! Invariants:
//! - Text is valid UTF-8 without NUL bytes (the mark of binary data, as for git and grep)
//!   that is not a document format able to pass for text (PDF, PostScript and RTF files
//!   can be pure ASCII: they are known by their first bytes). Anything else is binary,
//!   sent as a blob, never altered. Other binary formats fail the UTF-8 or NUL test on
//!   their content; their magic numbers alone (`BM`, `MZ`, `ID3`…) would also match
//!   ordinary text that happens to start with those letters.
//! - A type is never claimed against the content: text is never given a binary type
//!   (`text/plain` instead), and binary content a `text/…` one.

use rsrc::protocol::Text;

/// The MIME type from a file name alone (for listings); `None` for a name that is not
/// UTF-8 or whose extension says nothing.
pub(crate) fn mime_from_name(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    let ext = name.rsplit_once('.')?.1;
    by_extension(ext)
}

/// Extensions' types, remembered: the lookup in `mime_guess`'s table compares strings
/// case-insensitively along a binary search, several thousand instructions for every
/// file read or listed. At most this many extensions are kept.
const KEPT_EXTENSIONS: usize = 512;

/// Each extension seen, with its type or none.
type Known = std::sync::Mutex<std::collections::HashMap<Box<str>, Option<Box<str>>>>;

fn by_extension(ext: &str) -> Option<String> {
    use std::sync::{OnceLock, PoisonError};
    static KNOWN: OnceLock<Known> = OnceLock::new();
    let known = KNOWN.get_or_init(Known::default);
    if let Some(m) = known
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(ext)
    {
        return m.as_deref().map(str::to_owned);
    }
    let found = mime_guess::from_ext(ext)
        .first()
        .map(|m| normalize(m.essence_str()));
    let mut known = known.lock().unwrap_or_else(PoisonError::into_inner);
    if known.len() < KEPT_EXTENSIONS && ext.len() <= 16 {
        known.insert(ext.into(), found.as_deref().map(Box::from));
    }
    found
}

/// Types `mime_guess` spells differently from what hosts expect.
fn normalize(mime: &str) -> String {
    match mime {
        "text/x-markdown" => "text/markdown".into(),
        other => other.to_owned(),
    }
}

/// What bytes are by their magic numbers: a binary format (`Some(mime)`), or nothing
/// recognised.
#[cfg(any(feature = "fs", feature = "git"))]
fn sniff_binary(bytes: &[u8]) -> Option<&'static str> {
    let kind = infer::get(bytes)?;
    (kind.matcher_type() != infer::MatcherType::Text && !kind.mime_type().starts_with("text/"))
        .then(|| kind.mime_type())
}

/// The first bytes of the document formats whose files can be valid UTF-8 without NUL:
/// PDF, PostScript, RTF.
const TEXT_LIKE_DOCUMENTS: [&[u8]; 3] = [b"%PDF-", b"%!PS", b"{\\rtf"];

/// The content as text, or back as bytes if it is not text (see the module docs). The
/// buffer becomes the text without a copy; the checks are vectorised (the UTF-8 check
/// with SIMD, the NUL search with `memchr`).
pub(crate) fn text_or_bytes(bytes: Vec<u8>) -> Result<Text, Vec<u8>> {
    if TEXT_LIKE_DOCUMENTS.iter().any(|m| bytes.starts_with(m))
        || memchr::memchr(0, &bytes).is_some()
    {
        return Err(bytes);
    }
    Text::from_utf8(bytes)
}

/// The MIME type of content whose name's type is `by_name` ([`mime_from_name`]): for
/// text, the name's type unless that type claims binary content (then `text/plain`); for
/// binary content, what its magic bytes say, else the name's type, else
/// `application/octet-stream`.
#[cfg(any(feature = "fs", feature = "git"))]
pub(crate) fn mime_for(by_name: Option<String>, bytes: &[u8], is_text: bool) -> String {
    if is_text {
        return match by_name {
            Some(m) if !looks_binary_type(&m) => m,
            _ => "text/plain".into(),
        };
    }
    if let Some(sniffed) = sniff_binary(bytes) {
        return sniffed.to_owned();
    }
    match by_name {
        Some(m) if !m.starts_with("text/") => m,
        _ => "application/octet-stream".into(),
    }
}

#[cfg(any(feature = "fs", feature = "git"))]
fn looks_binary_type(mime: &str) -> bool {
    mime.starts_with("image/") && mime != "image/svg+xml"
        || mime.starts_with("audio/")
        || mime.starts_with("video/")
        || mime == "application/octet-stream"
        || mime == "application/pdf"
        || mime == "application/zip"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(feature = "fs", feature = "git"))]
    fn named(name: &[u8], bytes: &[u8], is_text: bool) -> String {
        mime_for(mime_from_name(name), bytes, is_text)
    }

    #[cfg(any(feature = "fs", feature = "git"))]
    #[test]
    fn types_come_from_the_name_when_the_content_agrees() {
        assert_eq!(named(b"a.md", b"# x", true), "text/markdown");
        assert_eq!(named(b"a.rs", b"fn main() {}", true), "text/x-rust");
        assert_eq!(named(b"README", b"hello", true), "text/plain");
        assert_eq!(named(b"a.json", b"{}", true), "application/json");
        // A .png that is really text is text.
        assert_eq!(named(b"fake.png", b"hello", true), "text/plain");
    }

    #[cfg(any(feature = "fs", feature = "git"))]
    #[test]
    fn binary_content_is_sniffed() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(named(b"noext", png, false), "image/png");
        assert_eq!(
            named(b"a.txt", &[0xff, 0xfe, 0], false),
            "application/octet-stream"
        );
        assert_eq!(
            named(b"data.bin", &[1, 2, 3], false),
            "application/octet-stream"
        );
    }

    #[test]
    fn text_is_utf8_without_nul_or_magic_number() {
        assert_eq!(text_or_bytes(b"plain".to_vec()), Ok(Text::from("plain")));
        assert!(text_or_bytes(b"a\0b".to_vec()).is_err());
        assert!(text_or_bytes(vec![0xff, 0xfe]).is_err());
        for document in [&b"%PDF-1.4\n"[..], b"%!PS-Adobe-3.0\n", b"{\\rtf1\\ansi}"] {
            assert!(
                text_or_bytes(document.to_vec()).is_err(),
                "a document is binary"
            );
        }
        // Text that starts like a binary format's magic number is still text.
        for text in [
            "BMW and MZ",
            "MZ",
            "ID3 tags",
            "OggS",
            "%!TEX root = main.tex",
            "8BPS",
        ] {
            assert!(text_or_bytes(text.into()).is_ok(), "{text}");
        }
        assert_eq!(mime_from_name(&[0xff, b'.', b'm', b'd']), None);
    }
}
