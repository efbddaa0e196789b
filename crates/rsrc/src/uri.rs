//! Syntactic validation of resource URIs (RFC 3986), applied to every URI a client sends
//! before any provider sees it, and the mapping of IRIs (RFC 3987) to URIs.
//!
//! Invariant: a URI that passes has a valid scheme, only characters RFC 3986 allows,
//! well-formed percent-encodings, and is at most the configured length. An IRI (raw
//! non-ASCII characters, as some hosts send `file:///café.md`) is first mapped to its URI
//! as RFC 3987 §3.1 says — each `ucschar` (and `iprivate` in the query) percent-encoded as
//! UTF-8 — so it reaches the same resource as its percent-encoded form; non-ASCII
//! characters RFC 3987 does not allow (controls, bidi formatting marks, non-characters)
//! are refused. Providers still check what the URI *means*; this only guarantees they
//! receive a well-formed string.

use std::borrow::Cow;
use std::fmt::Write as _;

use rsrc_uri_template::is_uri_char;

/// RFC 3987 `ucschar`, less the bidirectional formatting characters §4.1 forbids (they
/// make an IRI display as something it is not).
fn is_ucschar(c: char) -> bool {
    let bidi = matches!(u32::from(c), 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069);
    !bidi
        && matches!(u32::from(c),
        0xA0..=0xD7FF | 0xF900..=0xFDCF | 0xFDF0..=0xFFEF
        | 0x1_0000..=0x1_FFFD | 0x2_0000..=0x2_FFFD | 0x3_0000..=0x3_FFFD
        | 0x4_0000..=0x4_FFFD | 0x5_0000..=0x5_FFFD | 0x6_0000..=0x6_FFFD
        | 0x7_0000..=0x7_FFFD | 0x8_0000..=0x8_FFFD | 0x9_0000..=0x9_FFFD
        | 0xA_0000..=0xA_FFFD | 0xB_0000..=0xB_FFFD | 0xC_0000..=0xC_FFFD
        | 0xD_0000..=0xD_FFFD | 0xE_1000..=0xE_FFFD)
}

/// RFC 3987 `iprivate` (allowed in the query only).
fn is_iprivate(c: char) -> bool {
    matches!(u32::from(c), 0xE000..=0xF8FF | 0xF_0000..=0xF_FFFD | 0x10_0000..=0x10_FFFD)
}

/// The URI of `iri`: itself when it is all ASCII, else with every allowed non-ASCII
/// character percent-encoded (RFC 3987 §3.1). Disallowed non-ASCII characters are an
/// error; everything else is left for [`validate`].
pub(crate) fn to_uri(iri: &str) -> Result<Cow<'_, str>, String> {
    if iri.is_ascii() {
        return Ok(Cow::Borrowed(iri));
    }
    let query = iri.find('?').unwrap_or(iri.len());
    let mut out = String::with_capacity(iri.len() + 16);
    for (i, c) in iri.char_indices() {
        if c.is_ascii() {
            out.push(c);
        } else if is_ucschar(c) || (i > query && is_iprivate(c)) {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            return Err(format!(
                "character U+{:04X} at byte {i} is not allowed in a URI or IRI",
                u32::from(c)
            ));
        }
    }
    Ok(Cow::Owned(out))
}

/// Checks `uri`; the error says what is wrong.
pub(crate) fn validate(uri: &str, max_len: usize) -> Result<(), String> {
    if uri.is_empty() {
        return Err("the URI is empty".into());
    }
    if uri.len() > max_len {
        return Err(format!("the URI is longer than {max_len} bytes"));
    }
    let bytes = uri.as_bytes();
    let Some(colon) = bytes.iter().position(|&b| b == b':') else {
        return Err("the URI has no scheme (expected e.g. \"file:///…\")".into());
    };
    let scheme = &bytes[..colon];
    let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !scheme_ok {
        return Err("the URI's scheme is malformed".into());
    }
    let mut i = colon + 1;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let ok = bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
            if !ok {
                return Err(format!("malformed percent-encoding at byte {i}"));
            }
            i += 3;
            continue;
        }
        if !is_uri_char(b) {
            return Err(if b.is_ascii() {
                format!(
                    "character {:?} at byte {i} must be percent-encoded",
                    b as char
                )
            } else {
                format!("non-ASCII character at byte {i} must be percent-encoded")
            });
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn an_iri_maps_to_its_percent_encoded_uri() {
        use super::to_uri;
        assert_eq!(to_uri("file:///café.md").unwrap(), "file:///caf%C3%A9.md");
        assert_eq!(to_uri("file:///a%20b").unwrap(), "file:///a%20b");
        assert_eq!(
            to_uri("x://日本/語?q=𝄞").unwrap(),
            "x://%E6%97%A5%E6%9C%AC/%E8%AA%9E?q=%F0%9D%84%9E"
        );
        // A bidi override, a C1 control and private use outside the query are refused.
        assert!(to_uri("file:///a\u{202E}b").is_err());
        assert!(to_uri("file:///a\u{85}").is_err());
        assert!(to_uri("file:///\u{E000}").is_err());
        assert!(to_uri("file:///x?\u{E000}").is_ok());
    }

    #[test]
    fn well_formed_uris_pass() {
        for uri in [
            "file:///project/src/main.rs",
            "sample:///README.md",
            "db://users/123",
            "git:///main/src/a%20b.rs",
            "notion://workspace/pages/abc123?x=1#frag",
            "urn:isbn:0451450523",
        ] {
            assert_eq!(validate(uri, 1024), Ok(()), "{uri}");
        }
    }

    #[test]
    fn malformed_uris_are_refused_with_a_reason() {
        for (uri, why) in [
            ("", "empty"),
            ("no-scheme", "no scheme"),
            ("1file:///x", "scheme"),
            (":///x", "scheme"),
            ("file:///a b", "percent-encoded"),
            ("file:///a%2", "percent-encoding"),
            ("file:///a%zz", "percent-encoding"),
            ("file:///résumé", "non-ASCII"),
            ("file:///a\nb", "percent-encoded"),
            ("file:///a\"b", "percent-encoded"),
        ] {
            let e = validate(uri, 1024).unwrap_err();
            assert!(e.contains(why), "{uri}: {e}");
        }
        assert!(
            validate(&format!("file:///{}", "a".repeat(100)), 50)
                .unwrap_err()
                .contains("longer")
        );
    }
}
