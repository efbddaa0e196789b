//! Secret keys that rotate: the first seals, any opens. Cursors are sealed with such a
//! ring (`cursor.rs`), and so is everything the instances of a deployment write to
//! Redis (`bus/`).
//!
//! Invariants:
//! - A tag is always made with the first key; a tag made with any key of the ring
//!   verifies (in constant time), so a key can be replaced on every instance one at a
//!   time: put the new one first, keep the old one after it until nothing it sealed is
//!   in use, then remove it.
//! - Keys derived for one purpose ([`Keyring::derive`]) never verify another's tags.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// HMAC-SHA256, which every tag of a ring is.
pub(crate) type HmacSha256 = Hmac<Sha256>;

/// The bytes of a tag: HMAC-SHA256 truncated to 128 bits.
pub(crate) const TAG_LEN: usize = 16;

/// Keys of one purpose, the sealing one first, each held as a MAC already keyed (a tag
/// then costs the message's blocks, not the key's as well).
#[derive(Clone)]
pub(crate) struct Keyring {
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

impl Keyring {
    /// A ring sealing with `keys[0]` and opening with any; `None` without a key.
    pub(crate) fn new(keys: &[[u8; 32]]) -> Option<Keyring> {
        (!keys.is_empty()).then(|| Keyring {
            keys: keys.iter().map(mac).collect(),
        })
    }

    /// A ring of one fresh random key: what it seals lives as long as the process.
    pub(crate) fn random() -> Keyring {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No entropy source: a per-process value. What it seals then resists only
            // accidental misuse, which is all it guards when no key is secret.
            let seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            key[..16].copy_from_slice(&seed.to_le_bytes());
            key[16..24].copy_from_slice(&u64::from(std::process::id()).to_le_bytes());
        }
        Keyring {
            keys: vec![mac(&key)],
        }
    }

    /// The ring of keys for one purpose: each key `k` becomes HMAC(`k`, `label`).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn derive(&self, label: &str) -> Keyring {
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

    /// How many keys the ring holds.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The tag of what `write` feeds the MAC, with the sealing key.
    pub(crate) fn seal(&self, write: impl Fn(&mut HmacSha256)) -> [u8; TAG_LEN] {
        self.tag_with(0, write)
    }

    /// The tag of what `write` feeds the MAC, with key `index` (0 seals).
    pub(crate) fn tag_with(&self, index: usize, write: impl Fn(&mut HmacSha256)) -> [u8; TAG_LEN] {
        let mut m = self.keys[index].clone();
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
}

/// Feeds `parts` to a MAC, each after its length, so that no two lists of parts feed
/// the same bytes.
#[cfg_attr(not(any(feature = "http", feature = "redis")), allow(dead_code))]
pub(crate) fn feed(m: &mut HmacSha256, parts: &[&[u8]]) {
    for p in parts {
        m.update(&(p.len() as u64).to_le_bytes());
        m.update(p);
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
}
