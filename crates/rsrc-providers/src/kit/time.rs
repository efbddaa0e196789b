//! Times on the wire: `annotations.lastModified` is RFC 3339, UTC, to the second.
//!
//! Invariant: a time that RFC 3339 cannot write (before 1970 as far as the formatter is
//! concerned, or after 9999) gives no timestamp instead of a panic. Files and commits
//! carry any time their author chose.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the epoch of 10000-01-01T00:00:00Z, the first instant RFC 3339 cannot
/// write.
const YEAR_10000: u64 = 253_402_300_800;

/// `at` in RFC 3339 (UTC, seconds), when it lies between 1970 and 9999.
pub(crate) fn rfc3339(at: SystemTime) -> Option<String> {
    let secs = at.duration_since(UNIX_EPOCH).ok()?.as_secs();
    (secs < YEAR_10000).then(|| humantime::format_rfc3339_seconds(at).to_string())
}

/// Seconds since the epoch (a commit's time) in RFC 3339, when it lies between 1970 and
/// 9999.
#[cfg(feature = "git")]
pub(crate) fn rfc3339_seconds(seconds: i64) -> Option<String> {
    let secs = u64::try_from(seconds).ok()?;
    rfc3339(UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs))?)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn times_outside_what_rfc_3339_writes_give_none() {
        assert_eq!(rfc3339(UNIX_EPOCH).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(rfc3339(UNIX_EPOCH - Duration::from_secs(1)), None);
        let last = UNIX_EPOCH + Duration::from_secs(YEAR_10000 - 1);
        assert_eq!(rfc3339(last).as_deref(), Some("9999-12-31T23:59:59Z"));
        assert_eq!(rfc3339(last + Duration::from_secs(1)), None);
    }
}
