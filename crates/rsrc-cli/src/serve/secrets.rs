//! Secrets on disk and in connection strings: reading a file that holds a secret (a
//! token, a JWT secret, a password, cursor or bus keys), checking that such a file is
//! private and that a key is strong, and masking every spelling of a password in what
//! is printed (`--print-config`, start-up errors).
//!
//! Invariants:
//! - A file holding a secret that its group or others may read or write is refused (as
//!   ssh refuses such a private key), unless the operator says otherwise
//!   (`--allow-open-secrets`): the secret may already be someone else's.
//! - A key (a cursor or bus key line, a bearer token, a JWT HMAC secret) is at least
//!   [`MIN_KEY`] bytes and not one character repeated.
//! - A password written in a connection string never reaches the output: as a URL's
//!   userinfo (`postgres://u:PW@h`, `redis://:PW@h`), as a query parameter whose name
//!   holds `pass` (`?password=PW`, `redis+unix:///s?pass=PW`), or as a `password=PW` (or
//!   `password='P W'`) pair of a key/value connection string.

use std::path::Path;

/// The fewest bytes a key may have.
pub(crate) const MIN_KEY: usize = 32;

/// What the error says to do for a key that is too weak.
const MAKE_ONE: &str = "e.g. the output of `openssl rand -hex 32`";

/// Refuses `path` if its group or others may access it, unless `allow_open`.
pub(crate) fn check_private(path: &Path, allow_open: bool) -> Result<(), String> {
    #[cfg(unix)]
    if !allow_open {
        use std::os::unix::fs::PermissionsExt as _;
        let shown = path.display();
        let mode = std::fs::metadata(path)
            .map_err(|e| format!("{shown}: {e}"))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "{shown}: it holds a secret, and its group or others may access it (mode {:04o}): make it private to its owner (`chmod 600 {shown}`), or pass --allow-open-secrets",
                mode & 0o7777
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = (path, allow_open);
    Ok(())
}

/// The secret in `path`, without trailing whitespace: a private file (see
/// [`check_private`]) that is not empty.
pub(crate) fn read_secret(path: &Path, allow_open: bool) -> Result<Vec<u8>, String> {
    check_private(path, allow_open)?;
    let mut bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    while bytes.last().is_some_and(u8::is_ascii_whitespace) {
        bytes.pop();
    }
    if bytes.is_empty() {
        return Err(format!("{}: empty", path.display()));
    }
    Ok(bytes)
}

/// [`read_secret`] as text (`what` names it in the error).
pub(crate) fn read_text_secret(
    path: &Path,
    what: &str,
    allow_open: bool,
) -> Result<String, String> {
    String::from_utf8(read_secret(path, allow_open)?)
        .map_err(|_| format!("{}: the {what} is not UTF-8 text", path.display()))
}

/// Whether `key` is strong enough to be one: at least [`MIN_KEY`] bytes, not one
/// character repeated. The error names `what` and says how to make one.
pub(crate) fn check_key(key: &[u8], what: &str) -> Result<(), String> {
    if key.len() < MIN_KEY {
        return Err(format!(
            "the {what} has {} bytes: at least {MIN_KEY} are needed ({MAKE_ONE})",
            key.len()
        ));
    }
    if key.iter().all(|&b| b == key[0]) {
        return Err(format!(
            "the {what} is one character repeated: use a random one ({MAKE_ONE})"
        ));
    }
    Ok(())
}

/// The keys of a key file (`--cursor-key-file`, `--bus-key-file`): one per line, `#`
/// starting a comment; each checked ([`check_key`]) and hashed to 32 bytes. The first
/// is the one that seals; every one opens.
pub(crate) fn read_key_file(
    path: &Path,
    what: &str,
    allow_open: bool,
) -> Result<Vec<[u8; 32]>, String> {
    use sha2::Digest as _;
    let shown = path.display();
    check_private(path, allow_open)?;
    let bytes = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        format!(
            "{shown}: not text: a {what} file holds one key per line, as text (write one with `openssl rand -hex 32 > {shown}`)"
        )
    })?;
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        check_key(line.as_bytes(), what).map_err(|e| format!("{shown}:{}: {e}", i + 1))?;
        keys.push(sha2::Sha256::digest(line.as_bytes()).into());
    }
    if keys.is_empty() {
        return Err(format!(
            "{shown}: no {what} in it (write one with `openssl rand -hex 32 > {shown}`)"
        ));
    }
    Ok(keys)
}

/// The byte ranges of the passwords written in `text` (see the module docs), in order.
fn password_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    // URLs: the userinfo's password, and query parameters naming a password.
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let start = from + found + 3;
        let end = text[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .map_or(text.len(), |i| start + i);
        let url = &text[start..end];
        let query = url.find(['?', '#']).unwrap_or(url.len());
        if let Some(at) = url[..query].rfind('@')
            && let Some(colon) = url[..at].find(':')
            && at > colon + 1
        {
            ranges.push((start + colon + 1, start + at));
        }
        if let Some(q) = url.find('?') {
            let mut pos = start + q + 1;
            for pair in url[q + 1..].split(['&', '#']) {
                if let Some((key, value)) = pair.split_once('=')
                    && key.to_ascii_lowercase().contains("pass")
                    && !value.is_empty()
                {
                    let v = pos + key.len() + 1;
                    ranges.push((v, v + value.len()));
                }
                pos += pair.len() + 1;
            }
        }
        from = end.max(start);
    }
    // Key/value connection strings: `password=PW`, `password = 'P W'`.
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find("password") {
        let key_end = from + found + "password".len();
        from = key_end;
        let rest = &text[key_end..];
        let Some(eq) = rest
            .find(|c: char| !c.is_whitespace())
            .filter(|&i| rest[i..].starts_with('='))
        else {
            continue;
        };
        let after_eq = key_end + eq + 1;
        let value = &text[after_eq..];
        let skip = value.len() - value.trim_start().len();
        let start = after_eq + skip;
        let value = &text[start..];
        let len = if let Some(quoted) = value.strip_prefix('\'') {
            // Up to the closing quote; `\'` and `\\` are escapes.
            let mut escaped = false;
            let close = quoted
                .char_indices()
                .find(|&(_, c)| {
                    let end = c == '\'' && !escaped;
                    escaped = c == '\\' && !escaped;
                    end
                })
                .map_or(quoted.len(), |(i, _)| i);
            close + 2
        } else {
            value
                .find(|c: char| c.is_whitespace() || matches!(c, '&' | '"' | ','))
                .unwrap_or(value.len())
        };
        if len > 0 && !ranges.iter().any(|&(s, e)| s <= start && start < e) {
            ranges.push((start, (start + len).min(text.len())));
        }
    }
    ranges.sort_unstable();
    ranges.dedup();
    ranges
}

/// `text` with every password written in it (see the module docs) replaced by `***`.
pub(crate) fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in password_ranges(text) {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str("***");
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// `message` (an error about `connection`) with the passwords of `connection` masked
/// wherever they appear, as well as any written in the message itself.
pub(crate) fn redact_error(message: &str, connection: &str) -> String {
    let mut out = redact(message);
    for (start, end) in password_ranges(connection) {
        let password = &connection[start..end];
        // Shorter ones would mangle the message; they are no secret anyway.
        if password.len() >= 4 {
            out = out.replace(password, "***");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_password_is_masked() {
        for (written, shown) in [
            (
                "postgres://reader:s3cr3t@db.example.com:5432/crm",
                "postgres://reader:***@db.example.com:5432/crm",
            ),
            (
                "postgresql://reader@db/crm?sslmode=require&password=s3cr3t",
                "postgresql://reader@db/crm?sslmode=require&password=***",
            ),
            (
                "host=db user=reader password=s3cr3t dbname=crm",
                "host=db user=reader password=*** dbname=crm",
            ),
            (
                "host=db password = 'with \\' quote and spaces' dbname=crm",
                "host=db password = *** dbname=crm",
            ),
            (
                "redis://:s3cr3t@10.0.0.20:6379/0",
                "redis://:***@10.0.0.20:6379/0",
            ),
            (
                "rediss://rsrc:p@ss@redis.internal:6380",
                "rediss://rsrc:***@redis.internal:6380",
            ),
            (
                "redis+unix:///run/redis.sock?db=1&pass=s3cr3t",
                "redis+unix:///run/redis.sock?db=1&pass=***",
            ),
            (
                "--bus redis://:s3cr3t@h:1: cannot reach Redis",
                "--bus redis://:***@h:1: cannot reach Redis",
            ),
            ("postgres://reader@db/crm", "postgres://reader@db/crm"),
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
            ("sqlite:/srv/shop.db", "sqlite:/srv/shop.db"),
        ] {
            assert_eq!(redact(written), shown, "{written}");
            assert!(!redact(written).contains("s3cr3t"));
        }
        assert_eq!(
            redact_error(
                "error connecting: password s3cr3t refused",
                "postgres://u:s3cr3t@h/d"
            ),
            "error connecting: password *** refused"
        );
    }

    #[test]
    fn weak_keys_are_refused_with_what_to_do() {
        assert!(check_key(&[b'a'; 64], "cursor key").is_err());
        let short = check_key(b"0123456789", "bus key").unwrap_err();
        assert!(short.contains("openssl rand -hex 32"), "{short}");
        assert!(check_key(b"7f3e9a0c1d2b4e5f60718293a4b5c6d7e8f9", "bus key").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn secret_files_others_may_read_are_refused_unless_allowed() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "x".repeat(40)).unwrap();
        for (mode, private) in [(0o600, true), (0o400, true), (0o640, false), (0o604, false)] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(check_private(&file, false).is_ok(), private, "{mode:o}");
            assert!(check_private(&file, true).is_ok());
        }
        let e = check_private(&file, false).unwrap_err();
        assert!(
            e.contains("chmod 600") && e.contains("--allow-open-secrets"),
            "{e}"
        );
    }

    #[test]
    fn a_binary_key_file_says_what_to_write() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("keys");
        std::fs::write(&file, [0xffu8, 0x00, 0x9f, 0x92, 0x96]).unwrap();
        let e = read_key_file(&file, "cursor key", true).unwrap_err();
        assert!(
            e.contains("not text") && e.contains("openssl rand -hex 32"),
            "{e}"
        );
        assert!(!e.contains("did not contain valid UTF-8"));
    }
}
