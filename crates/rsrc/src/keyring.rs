//! Secret keys that rotate, the one tagged-text format everything authenticated is
//! written in, and the one source of randomness. Cursors are sealed with such a ring
//! (`cursor.rs`), and so is everything the instances of a deployment write to Redis
//! (`rsrc-redis`): messages, members, session names, records and replay logs.
//!
//! The format: a tag is HMAC-SHA256 truncated to [`TAG_LEN`] bytes, over a list of parts
//! each fed after its length (so no two lists feed the same bytes), written as
//! [`TAG_TEXT_LEN`] base64url characters ([`Keyring::tag`]). A tagged text is
//! `TAG<sep>BODY` ([`Keyring::seal_text`]), the tag covering what the text is bound to
//! (a channel, a key, a session and field) and then the body; it is read back by one
//! parser ([`split_tagged`]) and believed only through [`Keyring::open_text`].
//!
//! Invariants:
//! - A tag is always made with the first key; a tag made with any key of the ring
//!   verifies (in constant time), so a key can be replaced on every instance one at a
//!   time: put the new one first, keep the old one after it until nothing it sealed is
//!   in use, then remove it.
//! - Keys derived for one purpose ([`Keyring::derive`]) never verify another's tags.
//! - Nothing is believed unless its tag verifies: a text that is short, has no separator
//!   where the tag ends, or whose tag is not canonical base64url opens to nothing.
//! - Randomness comes from the operating system only ([`fill_random`]); when it fails,
//!   the caller is told ([`NoRandomness`]) and nothing is derived from the time or the
//!   process id instead.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// HMAC-SHA256, which every tag of a ring is.
pub(crate) type HmacSha256 = Hmac<Sha256>;

/// The bytes of a tag: HMAC-SHA256 truncated to 128 bits.
pub const TAG_LEN: usize = 16;

/// The characters of a tag written as base64url without padding.
pub const TAG_TEXT_LEN: usize = (TAG_LEN * 4).div_ceil(3);

/// The operating system's random source failed: nothing that needs a secret can be made.
#[derive(Debug, Clone)]
pub struct NoRandomness(String);

impl std::fmt::Display for NoRandomness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the operating system's random source failed ({}): no secret key or id can be made",
            self.0
        )
    }
}

impl std::error::Error for NoRandomness {}

/// Fills `buf` from the operating system's random source: the one place randomness
/// comes from (keys, instance ids, session ids).
pub fn fill_random(buf: &mut [u8]) -> Result<(), NoRandomness> {
    getrandom::fill(buf).map_err(|e| NoRandomness(e.to_string()))
}

/// `N` random bytes ([`fill_random`]).
pub fn random_bytes<const N: usize>() -> Result<[u8; N], NoRandomness> {
    let mut out = [0u8; N];
    fill_random(&mut out)?;
    Ok(out)
}

/// Keys of one purpose, the sealing one first, each held as a MAC already keyed (a tag
/// then costs the message's blocks, not the key's as well).
#[derive(Clone)]
pub struct Keyring {
    keys: Vec<HmacSha256>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keyring({} keys)", self.keys.len())
    }
}

fn mac(key: &[u8; 32]) -> HmacSha256 {
    <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes a key of any length")
}

/// Feeds `parts` to a MAC, each after its length, so that no two lists of parts feed
/// the same bytes.
fn feed(m: &mut HmacSha256, parts: &[&[u8]]) {
    for p in parts {
        m.update(&(p.len() as u64).to_le_bytes());
        m.update(p);
    }
}

/// Feeds `bound_to` and then `body`, as [`feed`] does the whole list.
fn feed_text(m: &mut HmacSha256, bound_to: &[&[u8]], body: &[u8]) {
    feed(m, bound_to);
    feed(m, &[body]);
}

/// Splits a tagged text `TAG<sep>BODY` into the tag's bytes and the body: the one parser
/// of the format. `None` when the text is shorter than a tag, the separator does not
/// follow it at once, or the tag is not canonical base64url. Nothing is verified here:
/// only [`Keyring::open_text`] says the body can be believed.
pub fn split_tagged(text: &[u8], sep: u8) -> Option<([u8; TAG_LEN], &[u8])> {
    let (tag, rest) = text.split_at_checked(TAG_TEXT_LEN)?;
    let body = rest.strip_prefix(&[sep])?;
    decode_tag(tag).map(|t| (t, body))
}

/// The bytes of a tag written as [`TAG_TEXT_LEN`] base64url characters, if they are
/// canonical.
fn decode_tag(text: &[u8]) -> Option<[u8; TAG_LEN]> {
    if text.len() != TAG_TEXT_LEN {
        return None;
    }
    // Room for what the decoder may estimate; exactly a tag is accepted.
    let mut out = [0u8; TAG_LEN + 2];
    match URL_SAFE_NO_PAD.decode_slice(text, &mut out) {
        Ok(TAG_LEN) => {
            let mut tag = [0u8; TAG_LEN];
            tag.copy_from_slice(&out[..TAG_LEN]);
            Some(tag)
        }
        _ => None,
    }
}

impl Keyring {
    /// A ring sealing with `keys[0]` and opening with any; `None` without a key.
    pub fn new(keys: &[[u8; 32]]) -> Option<Keyring> {
        (!keys.is_empty()).then(|| Keyring {
            keys: keys.iter().map(mac).collect(),
        })
    }

    /// A ring of one fresh random key: what it seals lives as long as the process.
    /// Refused when the operating system's random source fails.
    pub fn random() -> Result<Keyring, NoRandomness> {
        let key: [u8; 32] = random_bytes()?;
        Ok(Keyring {
            keys: vec![mac(&key)],
        })
    }

    /// The ring of keys for one purpose: each key `k` becomes HMAC(`k`, `label`).
    pub fn derive(&self, label: &str) -> Keyring {
        Keyring {
            keys: self
                .keys
                .iter()
                .map(|k| {
                    let derived: [u8; 32] = k
                        .clone()
                        .chain_update(label.as_bytes())
                        .finalize()
                        .into_bytes()
                        .into();
                    mac(&derived)
                })
                .collect(),
        }
    }

    /// How many keys the ring holds (at least one).
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// The tag of what `write` feeds the MAC, with the sealing key.
    pub(crate) fn seal(&self, write: impl Fn(&mut HmacSha256)) -> [u8; TAG_LEN] {
        self.tag_bytes(0, write)
    }

    /// The tag of what `write` feeds the MAC, with key `index` (0 seals; clamped to the
    /// ring).
    fn tag_bytes(&self, index: usize, write: impl Fn(&mut HmacSha256)) -> [u8; TAG_LEN] {
        let mut m = self.keys[index.min(self.keys.len() - 1)].clone();
        write(&mut m);
        let full = m.finalize().into_bytes();
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&full[..TAG_LEN]);
        tag
    }

    /// Whether `tag` is the tag, by any key of the ring, of what `write` feeds the MAC.
    pub(crate) fn opens(&self, tag: &[u8], write: impl Fn(&mut HmacSha256)) -> bool {
        tag.len() == TAG_LEN
            && self.keys.iter().any(|k| {
                let mut m = k.clone();
                write(&mut m);
                m.verify_truncated_left(tag).is_ok()
            })
    }

    /// The tag of `parts` (each fed after its length) with the sealing key, base64url.
    pub fn tag(&self, parts: &[&[u8]]) -> String {
        self.tag_with(0, parts)
    }

    /// [`tag`](Keyring::tag) with key `index` of the ring (0 seals): what an older key
    /// made, for finding (or removing) what was written before a rotation.
    pub fn tag_with(&self, index: usize, parts: &[&[u8]]) -> String {
        URL_SAFE_NO_PAD.encode(self.tag_bytes(index, |m| feed(m, parts)))
    }

    /// Whether `tag` (base64url, as [`tag`](Keyring::tag) writes it) is the tag of
    /// `parts` by any key of the ring.
    pub fn verifies(&self, tag: &[u8], parts: &[&[u8]]) -> bool {
        decode_tag(tag).is_some_and(|raw| self.opens(&raw, |m| feed(m, parts)))
    }

    /// `body`, bound to `bound_to`, as a tagged text `TAG<sep>BODY` with the sealing key.
    /// `sep` must not be a base64url character (`.` and `:` are used).
    pub fn seal_text(&self, sep: char, bound_to: &[&[u8]], body: &str) -> String {
        self.seal_text_with(0, sep, bound_to, body)
    }

    /// [`seal_text`](Keyring::seal_text) with key `index` of the ring (0 seals).
    pub fn seal_text_with(
        &self,
        index: usize,
        sep: char,
        bound_to: &[&[u8]],
        body: &str,
    ) -> String {
        debug_assert!(sep.is_ascii() && !(sep.is_ascii_alphanumeric() || sep == '-' || sep == '_'));
        let tag = self.tag_bytes(index, |m| feed_text(m, bound_to, body.as_bytes()));
        let mut out = String::with_capacity(TAG_TEXT_LEN + 1 + body.len());
        URL_SAFE_NO_PAD.encode_string(tag, &mut out);
        out.push(sep);
        out.push_str(body);
        out
    }

    /// The body of a tagged text `TAG<sep>BODY` bound to `bound_to`, if its tag verifies
    /// under any key of the ring.
    pub fn open_text<'a>(&self, sep: char, bound_to: &[&[u8]], text: &'a str) -> Option<&'a str> {
        let body = self.open_bytes(sep, bound_to, text.as_bytes())?;
        // The tag and the separator are ASCII: the body starts on a character boundary.
        text.get(text.len() - body.len()..)
    }

    /// [`open_text`](Keyring::open_text) on bytes that may not be UTF-8.
    pub fn open_bytes<'a>(
        &self,
        sep: char,
        bound_to: &[&[u8]],
        text: &'a [u8],
    ) -> Option<&'a [u8]> {
        let sep = u8::try_from(sep).ok()?;
        let (tag, body) = split_tagged(text, sep)?;
        self.opens(&tag, |m| feed_text(m, bound_to, body))
            .then_some(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_key_seals_and_any_opens() {
        let old = Keyring::new(&[[1; 32]]).unwrap();
        let rotated = Keyring::new(&[[2; 32], [1; 32]]).unwrap();
        let data = |m: &mut HmacSha256| feed(m, &[b"a", b"bc"]);
        let by_old = old.seal(data);
        assert!(rotated.opens(&by_old, data));
        let by_new = rotated.seal(data);
        assert_ne!(by_old, by_new);
        assert!(!old.opens(&by_new, data));
        assert!(!rotated.opens(&by_new[..8], data));
        // Length-prefixed: ("a", "bc") and ("ab", "c") differ.
        assert!(!rotated.opens(&by_new, |m| feed(m, &[b"ab", b"c"])));
        // Derived rings keep apart.
        let a = rotated.derive("a");
        assert!(!rotated.derive("b").opens(&a.seal(data), data));
        assert!(a.opens(&a.seal(data), data));
        assert!(Keyring::new(&[]).is_none());
    }

    #[test]
    fn a_sealed_text_opens_to_its_body_only_where_it_is_bound() {
        let keys = Keyring::new(&[[1; 32]]).unwrap();
        let text = keys.seal_text('.', &[b"chan"], "{\"a\":1}");
        assert_eq!(text.len(), TAG_TEXT_LEN + 1 + 7);
        assert_eq!(keys.open_text('.', &[b"chan"], &text), Some("{\"a\":1}"));
        assert_eq!(
            keys.open_bytes('.', &[b"chan"], text.as_bytes()),
            Some(&b"{\"a\":1}"[..])
        );
        // Bound elsewhere, read with another separator, or by another ring.
        assert_eq!(keys.open_text('.', &[b"other"], &text), None);
        assert_eq!(keys.open_text('.', &[], &text), None);
        assert_eq!(keys.open_text(':', &[b"chan"], &text), None);
        assert_eq!(keys.derive("x").open_text('.', &[b"chan"], &text), None);
        // The bound parts and the body are kept apart: ("c", "hanX") is not ("chan", "X").
        let split = keys.seal_text(':', &[b"c"], "hanX");
        let joined = keys.seal_text(':', &[b"chan"], "X");
        assert_ne!(split[..TAG_TEXT_LEN], joined[..TAG_TEXT_LEN]);
        // Empty bodies and multi-byte ones round-trip.
        for body in ["", "é:ü.", "x".repeat(1000).as_str()] {
            let t = keys.seal_text(':', &[b"n", b"f"], body);
            assert_eq!(keys.open_text(':', &[b"n", b"f"], &t), Some(body));
        }
        // A rotated ring opens what the old key sealed; seal_text_with makes the old form.
        let rotated = Keyring::new(&[[2; 32], [1; 32]]).unwrap();
        assert_eq!(rotated.open_text('.', &[b"chan"], &text), Some("{\"a\":1}"));
        assert_ne!(rotated.seal_text('.', &[b"chan"], "{\"a\":1}"), text);
        assert_eq!(
            rotated.seal_text_with(1, '.', &[b"chan"], "{\"a\":1}"),
            text
        );
    }

    #[test]
    fn forged_short_and_garbage_texts_open_to_nothing() {
        let keys = Keyring::new(&[[1; 32]]).unwrap();
        let good = keys.seal_text(':', &[b"n"], "debug");
        // The body changed under its tag; a tag moved onto another body.
        let forged = format!("{}error", &good[..=TAG_TEXT_LEN]);
        assert_eq!(keys.open_text(':', &[b"n"], &forged), None);
        // One character of the tag changed.
        let mut flipped = good.clone().into_bytes();
        flipped[3] = if flipped[3] == b'A' { b'B' } else { b'A' };
        let flipped = String::from_utf8(flipped).unwrap();
        assert_eq!(keys.open_text(':', &[b"n"], &flipped), None);
        // Short, no separator, separator misplaced, not base64, non-canonical last char.
        let tag = &good[..TAG_TEXT_LEN];
        let noncanonical = {
            let mut t = tag.as_bytes().to_vec();
            // The last character holds 4 bits of the tag and 2 that must be zero.
            t[TAG_TEXT_LEN - 1] = if t[TAG_TEXT_LEN - 1] == b'B' {
                b'C'
            } else {
                b'B'
            };
            format!("{}:debug", String::from_utf8(t).unwrap())
        };
        for junk in [
            "",
            "debug",
            ":debug",
            "é",
            &"x".repeat(TAG_TEXT_LEN),
            tag,
            &format!("{tag}debug"),
            &format!("{tag}.debug"),
            &format!("x{tag}:debug"),
            &format!("{}!:debug", &tag[..TAG_TEXT_LEN - 1]),
            &noncanonical,
        ] {
            assert_eq!(keys.open_text(':', &[b"n"], junk), None, "{junk:?}");
        }
        assert!(split_tagged(b"", b':').is_none());
        assert!(split_tagged(&[0xff; 40], b':').is_none());
        let (raw, body) = split_tagged(good.as_bytes(), b':').unwrap();
        assert_eq!(body, b"debug");
        assert_eq!(URL_SAFE_NO_PAD.encode(raw), tag);
    }

    #[test]
    fn a_bare_tag_verifies_its_parts_under_any_key() {
        let rotated = Keyring::new(&[[2; 32], [1; 32]]).unwrap();
        let old = Keyring::new(&[[1; 32]]).unwrap();
        let t = old.tag(&[b"id", b""]);
        assert_eq!(t.len(), TAG_TEXT_LEN);
        assert!(rotated.verifies(t.as_bytes(), &[b"id", b""]));
        assert_eq!(rotated.tag_with(1, &[b"id", b""]), t);
        assert!(!rotated.verifies(t.as_bytes(), &[b"id", b"x"]));
        assert!(!rotated.verifies(&t.as_bytes()[1..], &[b"id", b""]));
        assert!(!rotated.verifies(b"", &[b"id", b""]));
        assert!(!rotated.verifies(&[0xff; TAG_TEXT_LEN], &[b"id", b""]));
        assert_eq!(rotated.key_count(), 2);
    }

    #[test]
    fn random_keys_and_bytes_differ() {
        let a: [u8; 32] = random_bytes().unwrap();
        let b: [u8; 32] = random_bytes().unwrap();
        assert_ne!(a, b);
        let (x, y) = (Keyring::random().unwrap(), Keyring::random().unwrap());
        assert_ne!(x.tag(&[b"p"]), y.tag(&[b"p"]));
    }
}
