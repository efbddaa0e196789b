//! Character sets of RFC 3986 and RFC 6570, and percent-encoding helpers.
//!
//! Everything here is a pure function over bytes or chars; the grammar names in the doc
//! comments are those of the RFCs.

/// `HEXDIG`, either case.
pub(crate) fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"`.
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `reserved = gen-delims / sub-delims`.
pub(crate) fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

/// A byte RFC 3986 allows unencoded anywhere in a URI: `unreserved / reserved`.
pub fn is_uri_char(b: u8) -> bool {
    is_unreserved(b) || is_reserved(b)
}

/// ASCII characters allowed in a template literal (RFC 6570 section 2.1), `%` excluded
/// (it is checked as part of a pct-encoded triplet).
pub(crate) fn is_literal_ascii(b: u8) -> bool {
    matches!(b,
        0x21 | 0x23..=0x24 | 0x26..=0x3B | 0x3D | 0x3F..=0x5B | 0x5D | 0x5F | 0x61..=0x7A | 0x7E)
}

/// `ucschar / iprivate` (RFC 3987), the non-ASCII characters a literal may contain.
pub(crate) fn is_ucschar_or_iprivate(c: char) -> bool {
    let c = u32::from(c);
    matches!(c,
        0xA0..=0xD7FF
        | 0xF900..=0xFDCF
        | 0xFDF0..=0xFFEF
        | 0x10000..=0x1FFFD
        | 0x20000..=0x2FFFD
        | 0x30000..=0x3FFFD
        | 0x40000..=0x4FFFD
        | 0x50000..=0x5FFFD
        | 0x60000..=0x6FFFD
        | 0x70000..=0x7FFFD
        | 0x80000..=0x8FFFD
        | 0x90000..=0x9FFFD
        | 0xA0000..=0xAFFFD
        | 0xB0000..=0xBFFFD
        | 0xC0000..=0xCFFFD
        | 0xD0000..=0xDFFFD
        | 0xE1000..=0xEFFFD
        // iprivate
        | 0xE000..=0xF8FF
        | 0xF0000..=0xFFFFD
        | 0x100000..=0x10FFFD)
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `%XX` for one byte.
pub(crate) fn push_pct(out: &mut String, b: u8) {
    out.push('%');
    out.push(char::from(HEX_UPPER[usize::from(b >> 4)]));
    out.push(char::from(HEX_UPPER[usize::from(b & 0xF)]));
}

/// Appends `s` to `out`, percent-encoding every byte outside the allowed set: `unreserved`,
/// plus `reserved` and existing pct-encoded triplets when `allow_reserved` (RFC 6570
/// section 3.2.1).
pub(crate) fn encode_into(out: &mut String, s: &str, allow_reserved: bool) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if is_unreserved(b) || (allow_reserved && is_reserved(b)) {
            out.push(char::from(b));
        } else if allow_reserved
            && b == b'%'
            && bytes.get(i + 1).copied().is_some_and(is_hex)
            && bytes.get(i + 2).copied().is_some_and(is_hex)
        {
            out.push('%');
            out.push(char::from(bytes[i + 1]));
            out.push(char::from(bytes[i + 2]));
            i += 3;
            continue;
        } else {
            push_pct(out, b);
        }
        i += 1;
    }
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-decodes `raw` once. Fails on a `%` not followed by two hex digits, or when the
/// decoded bytes are not UTF-8.
pub(crate) fn pct_decode(raw: &str) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = hex_val(*bytes.get(i + 1)?)?;
            let lo = hex_val(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The first `n` characters of `s` (all of it when shorter).
pub(crate) fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_once() {
        assert_eq!(pct_decode("%2541").as_deref(), Some("%41"));
        assert_eq!(pct_decode("a%2Fb").as_deref(), Some("a/b"));
        assert_eq!(pct_decode("%zz"), None);
        assert_eq!(pct_decode("%4"), None);
        assert_eq!(pct_decode("%FF"), None);
        assert_eq!(pct_decode("%C3%A9").as_deref(), Some("é"));
    }

    #[test]
    fn encode_sets() {
        let mut s = String::new();
        encode_into(&mut s, "a b/%41%zz", false);
        assert_eq!(s, "a%20b%2F%2541%25zz");
        s.clear();
        encode_into(&mut s, "a b/%41%zz", true);
        assert_eq!(s, "a%20b/%41%25zz");
    }

    #[test]
    fn truncation_counts_chars() {
        assert_eq!(truncate_chars("αβγ", 2), "αβ");
        assert_eq!(truncate_chars("ab", 5), "ab");
    }
}
