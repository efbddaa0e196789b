//! Syntactic validation of resource URIs (RFC 3986), applied to every URI a client sends
//! before any provider sees it.
//!
//! Invariant: a URI that passes has a valid scheme, only characters RFC 3986 allows
//! (non-ASCII must be percent-encoded), well-formed percent-encodings, and is at most the
//! configured length. Providers still check what the URI *means*; this only guarantees
//! they receive a well-formed string.

use rsrc_uri_template::is_uri_char;

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
