//! Sealed pagination cursors.
//!
//! A cursor is `base64url(version ‖ list kind ‖ mount ‖ position ‖ tag)`, where `position`
//! is the provider's keyset bytes and `tag` is HMAC-SHA256 (truncated to 128 bits) over
//! everything before it *and* the scope of the listing (the collection URI, or nothing for
//! the default listing, and the SEP-2564 filter it walks under: [`scope`]). The scope is
//! authenticated but not stored.
//!
//! Invariants:
//! - A provider only ever receives positions this server produced for the same listing:
//!   a forged, truncated, foreign (other server key, other list kind, other collection,
//!   other filter or none) or stale (older format) cursor fails to open and the client gets
//!   `-32602`.
//! - Cursor size is bounded before any decoding work is done.
//! - A sealer may hold older keys beside its own: it seals with its own only and opens
//!   with any ([`Keyring`]), so a key can be rotated across instances without breaking
//!   cursors in flight (see `docs/deployment.md`).

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac as _;

use crate::filter::Filter;
use crate::keyring::{HmacSha256, Keyring, TAG_LEN};
use crate::provider::MAX_POSITION_BYTES;

const FORMAT_VERSION: u8 = 1;
const HEADER_LEN: usize = 4;
/// The longest cursor string accepted, in bytes.
pub(crate) const MAX_CURSOR_LEN: usize =
    (HEADER_LEN + MAX_POSITION_BYTES + TAG_LEN).div_ceil(3) * 4;

/// Which listing a cursor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum ListKind {
    /// `resources/list` without `uri`.
    Resources = 1,
    /// `resources/list` with `uri` (and `resources/directory/read`).
    Children = 2,
    /// `resources/templates/list`.
    Templates = 3,
    /// The tools bridge's `search_resources` (scoped to its words).
    Search = 4,
}

/// The scope a cursor of a listing is sealed to: the listing's own (`listing`: the
/// collection's URI, or empty), followed under a filter by a NUL and the filter's key. No
/// URI holds a NUL, so no two listings share a scope: a cursor continues the listing, under
/// the same filter or none, that issued it. An unfiltered listing's scope is its own.
pub(crate) fn scope<'a>(listing: &'a str, filter: Option<&Filter>) -> Cow<'a, str> {
    match filter {
        None => Cow::Borrowed(listing),
        Some(f) => Cow::Owned(format!("{listing}\0{}", f.key())),
    }
}

/// Why a cursor was refused. One message for all causes: telling a forger which check
/// failed would only help them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvalidCursor;

impl std::fmt::Display for InvalidCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid cursor: it was not issued by this server for this listing (restart the listing without a cursor)")
    }
}

/// Seals cursors with one secret key and opens them with it or an older one.
#[derive(Clone, Debug)]
pub(crate) struct CursorSealer {
    keys: Keyring,
}

impl CursorSealer {
    /// A sealer of one fixed key (tests and fuzzing).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn new(key: [u8; 32]) -> Self {
        CursorSealer::rotating(key, Vec::new())
    }

    /// Seals with `key`, opens with `key` or any of `older`.
    pub(crate) fn rotating(key: [u8; 32], older: Vec<[u8; 32]>) -> Self {
        let mut keys = vec![key];
        keys.extend(older);
        CursorSealer {
            keys: Keyring::new(&keys).expect("at least one key"),
        }
    }

    /// A sealer with a fresh random key: cursors do not survive a restart. Refused when
    /// the operating system's random source fails.
    pub(crate) fn random() -> Result<Self, crate::keyring::NoRandomness> {
        Ok(CursorSealer {
            keys: Keyring::random()?,
        })
    }

    /// What the tag covers: the cursor's bytes and the listing's scope.
    fn tagged<'a>(body: &'a [u8], scope: &'a str) -> impl Fn(&mut HmacSha256) + 'a {
        move |mac| {
            mac.update(body);
            mac.update(&(scope.len() as u64).to_le_bytes());
            mac.update(scope.as_bytes());
        }
    }

    /// Seals a position of mount `mount` in listing `kind` scoped to `scope`.
    pub(crate) fn seal(&self, kind: ListKind, scope: &str, mount: u16, position: &[u8]) -> String {
        debug_assert!(position.len() <= MAX_POSITION_BYTES);
        let mut raw = Vec::with_capacity(HEADER_LEN + position.len() + TAG_LEN);
        raw.push(FORMAT_VERSION);
        raw.push(kind as u8);
        raw.extend_from_slice(&mount.to_be_bytes());
        raw.extend_from_slice(position);
        let tag = self.keys.seal(Self::tagged(&raw, scope));
        raw.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(raw)
    }

    /// Opens a cursor of listing `kind` scoped to `scope`, giving the mount and position.
    pub(crate) fn open(
        &self,
        cursor: &str,
        kind: ListKind,
        scope: &str,
    ) -> Result<(u16, Vec<u8>), InvalidCursor> {
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(InvalidCursor);
        }
        let raw = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| InvalidCursor)?;
        if raw.len() < HEADER_LEN + TAG_LEN {
            return Err(InvalidCursor);
        }
        let (body, tag) = raw.split_at(raw.len() - TAG_LEN);
        if !self.keys.opens(tag, Self::tagged(body, scope)) {
            return Err(InvalidCursor);
        }
        if body[0] != FORMAT_VERSION || body[1] != kind as u8 {
            return Err(InvalidCursor);
        }
        let mount = u16::from_be_bytes([body[2], body[3]]);
        Ok((mount, body[HEADER_LEN..].to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer() -> CursorSealer {
        CursorSealer::new([7; 32])
    }

    #[test]
    fn a_sealed_cursor_opens_to_its_position() {
        let s = sealer();
        let c = s.seal(ListKind::Resources, "", 3, b"file:///a/b");
        assert_eq!(
            s.open(&c, ListKind::Resources, ""),
            Ok((3, b"file:///a/b".to_vec()))
        );
        let empty = s.seal(ListKind::Templates, "", 0, b"");
        assert_eq!(s.open(&empty, ListKind::Templates, ""), Ok((0, Vec::new())));
    }

    #[test]
    fn forged_truncated_and_foreign_cursors_are_refused() {
        let s = sealer();
        let c = s.seal(ListKind::Children, "file:///dir", 0, b"pos");
        // Other collection, other list, other server key.
        assert!(s.open(&c, ListKind::Children, "file:///other").is_err());
        assert!(s.open(&c, ListKind::Resources, "file:///dir").is_err());
        assert!(
            CursorSealer::new([8; 32])
                .open(&c, ListKind::Children, "file:///dir")
                .is_err()
        );
        // Truncated, flipped, garbage, empty, huge.
        assert!(
            s.open(&c[..c.len() - 2], ListKind::Children, "file:///dir")
                .is_err()
        );
        let mut bytes = URL_SAFE_NO_PAD.decode(&c).unwrap();
        bytes[5] ^= 1;
        assert!(
            s.open(
                &URL_SAFE_NO_PAD.encode(&bytes),
                ListKind::Children,
                "file:///dir"
            )
            .is_err()
        );
        for junk in ["", "!!!", "AAAA", "eyJwYWdlIjogM30="] {
            assert!(
                s.open(junk, ListKind::Children, "file:///dir").is_err(),
                "{junk}"
            );
        }
        assert!(
            s.open(&"A".repeat(MAX_CURSOR_LEN + 4), ListKind::Children, "")
                .is_err()
        );
    }

    #[test]
    fn a_cursor_continues_its_own_filter_only() {
        use rsrc_protocol::resources::ListFilter;
        let filter = |p: &str| {
            Filter::new(&ListFilter {
                name_patterns: Some(vec![p.to_owned()]),
                uri_patterns: None,
            })
            .unwrap()
        };
        let (md, txt) = (filter("*.md"), filter("*.txt"));
        let s = sealer();
        let c = s.seal(ListKind::Children, &scope("x:///d", md.as_ref()), 0, b"p");
        assert!(
            s.open(&c, ListKind::Children, &scope("x:///d", md.as_ref()))
                .is_ok()
        );
        for other in [
            scope("x:///d", txt.as_ref()),
            scope("x:///d", None),
            scope("x:///e", md.as_ref()),
        ] {
            assert!(s.open(&c, ListKind::Children, &other).is_err(), "{other:?}");
        }
        assert_eq!(
            scope("x:///d", None),
            "x:///d",
            "unfiltered scopes are unchanged"
        );
    }

    #[test]
    fn a_rotated_key_still_opens_what_the_old_one_sealed() {
        let old = CursorSealer::new([1; 32]);
        let c = old.seal(ListKind::Resources, "", 1, b"p");
        let rotated = CursorSealer::rotating([2; 32], vec![[1; 32]]);
        assert_eq!(
            rotated.open(&c, ListKind::Resources, ""),
            Ok((1, b"p".to_vec()))
        );
        let fresh = rotated.seal(ListKind::Resources, "", 1, b"p");
        assert_ne!(fresh, c, "new cursors are sealed with the new key");
        assert!(old.open(&fresh, ListKind::Resources, "").is_err());
        assert!(
            CursorSealer::new([2; 32])
                .open(&c, ListKind::Resources, "")
                .is_err()
        );
    }

    #[test]
    fn the_largest_position_fits_under_the_cursor_limit() {
        let s = sealer();
        let c = s.seal(
            ListKind::Resources,
            "",
            u16::MAX,
            &[0xAB; MAX_POSITION_BYTES],
        );
        assert!(c.len() <= MAX_CURSOR_LEN);
        assert!(s.open(&c, ListKind::Resources, "").is_ok());
    }
}
