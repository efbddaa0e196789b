//! The values written the same way in the file and on the command line: sizes
//! (`32MiB`), durations (`250ms`), listening addresses (`127.0.0.1:8080`, `8080`) and
//! the listing freshness mode (`watch`, `stamp`).
//!
//! Invariant: each value prints in a form that reads back to the same value (a size in
//! the largest unit that divides it exactly).

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A size in bytes, written `32MiB`, `64KiB`, `1GiB` or as a plain number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Size(pub(crate) u64);

/// Parses `1024`, `64KiB`, `32MiB`, `1GiB` (also `K`, `M`, `G`, `KB`, `MB`, `GB` as
/// powers of 1024).
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("not a size: {s:?}"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(format!("unknown size unit {other:?} (use KiB, MiB or GiB)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

impl std::fmt::Display for Size {
    /// The largest unit that divides the size exactly: what [`parse_size`] reads back.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0;
        match [(30, "GiB"), (20, "MiB"), (10, "KiB")]
            .into_iter()
            .find(|(shift, _)| n != 0 && n.trailing_zeros() >= *shift)
        {
            Some((shift, unit)) => write!(f, "{}{unit}", n >> shift),
            None => write!(f, "{n}"),
        }
    }
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Bytes(u64),
            Text(String),
        }
        match Written::deserialize(d).map_err(|_: D::Error| {
            serde::de::Error::custom(
                "expected a size: a number of bytes or a string like \"32MiB\"",
            )
        })? {
            Written::Bytes(n) => Ok(Size(n)),
            Written::Text(s) => parse_size(&s).map(Size).map_err(serde::de::Error::custom),
        }
    }
}

/// A duration, written `250ms`, `5s`, `30m`, `1h 30m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dur(pub(crate) Duration);

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(&text)
            .map(Dur)
            .map_err(|e| serde::de::Error::custom(format!("not a duration: {text:?} ({e})")))
    }
}

/// `ADDR:PORT`, `[V6]:PORT`, `localhost:PORT` or `PORT`.
pub(crate) fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = s.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("bad port in {s:?}"))?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| format!("not an address: {s:?} (expected e.g. 127.0.0.1:8080 or 8080)"))
}

/// An HTTP listening address, written as for `--http`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Listen(pub(crate) SocketAddr);

impl Serialize for Listen {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Listen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Port(u16),
            Text(String),
        }
        match Written::deserialize(d).map_err(|_: D::Error| {
            serde::de::Error::custom("expected an address like \"127.0.0.1:8080\" or a port")
        })? {
            Written::Port(p) => Ok(Listen(SocketAddr::from(([127, 0, 0, 1], p)))),
            Written::Text(s) => parse_listen(&s)
                .map(Listen)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Size, parse_size};

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("32MiB"), Ok(32 << 20));
        assert_eq!(parse_size("1 GiB"), Ok(1 << 30));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999999GiB").is_err());
    }

    #[test]
    fn sizes_print_in_the_largest_exact_unit_and_read_back() {
        for (n, shown) in [
            (0, "0"),
            (1000, "1000"),
            (1024, "1KiB"),
            (1536, "1536"),
            (3 << 20, "3MiB"),
            ((1 << 30) + (1 << 20), "1025MiB"),
            (5 << 30, "5GiB"),
        ] {
            assert_eq!(Size(n).to_string(), shown);
            assert_eq!(parse_size(shown), Ok(n));
        }
    }
}

/// How a directory listing the server cached is known to be current, written `watch` or
/// `stamp` (`rsrc_providers::fs::ListingFreshness`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Freshness {
    /// Take the file watcher's word while it is armed and has lost nothing; stamps where
    /// it cannot vouch.
    Watch,
    /// Read each cached directory's stamp on every listing (network filesystems).
    Stamp,
}

impl From<Freshness> for rsrc_providers::fs::ListingFreshness {
    fn from(mode: Freshness) -> Self {
        match mode {
            Freshness::Watch => rsrc_providers::fs::ListingFreshness::Watch,
            Freshness::Stamp => rsrc_providers::fs::ListingFreshness::Stamp,
        }
    }
}
