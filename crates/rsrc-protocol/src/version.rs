//! Protocol revisions and eras.
//!
//! The *legacy* era (2025-06-18, 2025-11-25) negotiates a version once, with `initialize`;
//! the *modern* era (2026-07-28) carries the version in every request's `_meta`. A revision
//! string from the wire stays a `String` in the message types; [`ProtocolVersion`] names
//! only the revisions this crate models.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A protocol revision this crate models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// 2025-06-18: the seed revision of the resources feature.
    V2025_06_18,
    /// 2025-11-25: adds icons.
    V2025_11_25,
    /// 2026-07-28: stateless, `server/discover`, per-request `_meta`.
    V2026_07_28,
}

/// How a revision establishes its context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` handshake; the version holds for the session.
    Legacy,
    /// Every request carries its version in `_meta`.
    Modern,
}

impl ProtocolVersion {
    /// Every modelled revision, newest first.
    pub const ALL: [ProtocolVersion; 3] = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];
    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;
    /// The newest revision that uses `initialize`.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision string, e.g. `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era of this revision.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25 => Era::Legacy,
            ProtocolVersion::V2026_07_28 => Era::Modern,
        }
    }

    /// Whether this revision is stateless (per-request `_meta`).
    pub const fn is_modern(self) -> bool {
        matches!(self.era(), Era::Modern)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A revision string that this crate does not model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown protocol version {:?}", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_round_trip_and_order_by_date() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
        }
        assert!(ProtocolVersion::V2025_06_18 < ProtocolVersion::V2026_07_28);
        assert_eq!(ProtocolVersion::LATEST.era(), Era::Modern);
        assert_eq!(ProtocolVersion::LATEST_LEGACY.era(), Era::Legacy);
        assert!("2025-03-26".parse::<ProtocolVersion>().is_err());
    }
}
