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
//!
//! [`canonical`] is the form a URI is compared in when what it names matters more than
//! how it is spelled (the URIs kept out of the tools): every spelling a provider resolves
//! to the same resource has the same canonical form.

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

/// `uri` as every provider resolves it, for comparisons (RFC 3986 §6.2.2, and beyond it
/// wherever a provider reads more spellings as one): the scheme and the authority in
/// lowercase, every percent-encoded octet decoded once (unreserved characters as RFC
/// 3986 normalises them, reserved ones because every provider decodes each segment or
/// template value whole, and `%2F` because a reserved expansion (`{+path}`) decodes it
/// into a separator), then the path's dot segments removed (RFC 3986 §5.2.4). Bytes, as
/// decoding may give text that is not UTF-8.
///
/// Two URIs with the same canonical form may name different resources (a database key
/// holding `/`, a host whose provider tells case apart): the form errs towards
/// sameness, which is the safe side for what it is used for, keeping resources out.
pub(crate) fn canonical(uri: &str) -> Vec<u8> {
    normalized(uri, true)
}

/// [`canonical`] with the dot segments left as they are: how a provider that takes
/// `..` for a name (a template variable's value) reads the URI.
pub(crate) fn decoded(uri: &str) -> Vec<u8> {
    normalized(uri, false)
}

fn normalized(uri: &str, remove_dots: bool) -> Vec<u8> {
    let (scheme, rest) = uri.split_once(':').unwrap_or(("", uri));
    let mut out: Vec<u8> = scheme.to_ascii_lowercase().into_bytes();
    out.push(b':');
    let mut rest = rest;
    if let Some(after) = rest.strip_prefix("//") {
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        out.extend_from_slice(b"//");
        let mut authority = percent_decode(&after[..end]);
        authority.make_ascii_lowercase();
        out.extend_from_slice(&authority);
        rest = &after[end..];
    }
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let path = percent_decode(&rest[..end]);
    if remove_dots {
        out.extend_from_slice(&remove_dot_segments(&path));
    } else {
        out.extend_from_slice(&path);
    }
    out.extend_from_slice(&percent_decode(&rest[end..]));
    out
}

/// `text` with every well-formed `%XX` decoded, once.
fn percent_decode(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// RFC 3986 §5.2.4 over a decoded path: `.` segments dropped, `..` removing the segment
/// before it (never climbing above the root).
fn remove_dot_segments(path: &[u8]) -> Vec<u8> {
    if !path.split(|&c| c == b'/').any(|s| s == b"." || s == b"..") {
        return path.to_vec();
    }
    let absolute = path.first() == Some(&b'/');
    let segments: Vec<&[u8]> = path.split(|&c| c == b'/').collect();
    let last = segments.len() - 1;
    let mut kept: Vec<&[u8]> = Vec::new();
    for (i, s) in segments.iter().enumerate() {
        match *s {
            b"." | b".." => {
                if *s == b".." && kept.len() > usize::from(absolute) {
                    kept.pop();
                }
                // A path ending in a dot segment names a directory: it keeps its slash.
                if i == last {
                    kept.push(b"");
                }
            }
            _ => kept.push(s),
        }
    }
    if absolute && kept.is_empty() {
        kept.push(b"");
    }
    let mut out = kept.join(&b'/');
    if absolute && out.first() != Some(&b'/') {
        out.insert(0, b'/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn every_spelling_of_a_resource_has_one_canonical_form() {
        use super::canonical;
        let same = |a: &str, b: &str| {
            assert_eq!(
                String::from_utf8_lossy(&canonical(a)),
                String::from_utf8_lossy(&canonical(b)),
                "{a} and {b}"
            );
        };
        same("file:///%73ecret/key.txt", "file:///secret/key.txt");
        same("db://%73hop/items/1", "db://shop/items/1");
        same("DB://SHOP/items/1", "db://shop/items/1");
        same("db://sh%6fp/items/1", "db://shop/items/1");
        same("file:///a%21b/x", "file:///a!b/x");
        same("file:///open/../secret/x", "file:///secret/x");
        same("file:///open/%2E%2E/secret/x", "file:///secret/x");
        same("file:///./secret/./x", "file:///secret/x");
        same("file:///../../secret", "file:///secret");
        same("file:///secret/sub/..", "file:///secret/");
        same("x:///a%2Fb", "x:///a/b");
        same("skill://team/s/%53KILL.md", "skill://team/s/SKILL.md");
        same("git:///main/%2e%2e/x?q=%41#%42", "git:///x?q=A#B");
        // Case is kept where providers keep it: the path, the query.
        assert_ne!(canonical("file:///Secret"), canonical("file:///secret"));
        // Decoded once: a double encoding stays one level encoded.
        assert_eq!(canonical("file:///%2573"), b"file:///%73");
        // Not UTF-8 once decoded: kept as bytes.
        assert_eq!(canonical("file:///%FF"), b"file:///\xff");
    }

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
