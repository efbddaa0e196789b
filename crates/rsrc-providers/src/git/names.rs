//! `git:` URIs ↔ (ref name, path), and the rules that turn a ref name from a URI into one
//! full reference name.
//!
//! A URI after the provider's prefix is `{ref}` or `{ref}/{path}`: the ref is ONE segment
//! (a `/` in a ref name is written `%2F`, as RFC 6570 simple expansion writes it), the
//! path is `/`-separated segments. Every segment is percent-decoded exactly once, after
//! splitting, so an encoded `/` can never act as a separator.
//!
//! Invariants:
//! - A ref name that reaches the repository has passed `gix_validate`'s reference-name
//!   rules (no `..`, `@{`, `~`, `^`, `:`, `?`, `*`, `[`, `\`, space, control characters,
//!   `.lock` suffix, empty or dot-led components) and has no component starting with `-`
//!   or `.`: nothing a revision parser or a command line could read as an option, a
//!   range, a reflog entry or a path. A ref name is only ever *looked up* among the
//!   served references (`HEAD`, `refs/heads/…`, `refs/tags/…`), or is a full, lowercase
//!   hexadecimal object id.
//! - Path components are non-empty, never `.` or `..`, and hold neither `/` nor NUL; they
//!   are only compared with tree entry names, never joined into a filesystem path.
//! - [`short_name`] and [`resolve_in`] agree: the name the provider lists for a reference
//!   resolves back to exactly that reference.

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};

use crate::kit::segment::{decode, push_expanded, push_path_segment};

/// The longest ref name accepted from a URI, in bytes.
pub(crate) const MAX_REF_NAME: usize = 1024;

/// A ref as a URI names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RefName {
    /// A full commit id (lowercase hexadecimal).
    Id(ObjectId),
    /// A validated reference name, short (`main`, `feature/x`, `heads/main`) or full
    /// (`refs/tags/v1`, `HEAD`).
    Name(BString),
}

/// What a URI points at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    /// The repository: the collection of refs.
    Repo,
    /// The tree of a ref's commit.
    Ref(RefName),
    /// An entry below a ref's tree (at least one component).
    Entry(RefName, Vec<BString>),
}

impl Target {
    /// The ref this target lives under, if any.
    pub(crate) fn ref_name(&self) -> Option<&RefName> {
        match self {
            Target::Repo => None,
            Target::Ref(r) | Target::Entry(r, _) => Some(r),
        }
    }

    /// The path below the ref (empty for the ref itself).
    pub(crate) fn path(&self) -> &[BString] {
        match self {
            Target::Entry(_, p) => p,
            _ => &[],
        }
    }
}

/// Parses the part of a URI after the provider's prefix. The error says why (for the log
/// only: a client sees not-found).
pub(crate) fn parse(rest: &str, hash: gix::hash::Kind) -> Result<Target, String> {
    if rest.contains(['?', '#']) {
        return Err("git URIs take no query or fragment".into());
    }
    if rest.is_empty() {
        return Ok(Target::Repo);
    }
    let (first, tail) = match rest.split_once('/') {
        Some((first, tail)) => (first, tail),
        None => (rest, ""),
    };
    let name = decode_ref(first, hash)?;
    let tail = tail.strip_suffix('/').unwrap_or(tail);
    if tail.is_empty() {
        return Ok(Target::Ref(name));
    }
    Ok(Target::Entry(name, decode_path(tail)?))
}

/// Decodes `/`-separated path segments, each once.
pub(crate) fn decode_path(path: &str) -> Result<Vec<BString>, String> {
    let mut components = Vec::new();
    for segment in path.split('/') {
        let bytes = decode(segment);
        if !valid_component(&bytes) {
            return Err(format!("path segment {segment:?} is not allowed"));
        }
        components.push(BString::from(bytes));
    }
    Ok(components)
}

/// The longest path component, in bytes (a listing's keyset position is one name).
pub(crate) const MAX_COMPONENT: usize = 4096;

/// Whether a tree entry name can be a path component (and so a URI segment that decodes
/// back to it).
pub(crate) fn valid_component(c: &[u8]) -> bool {
    !c.is_empty()
        && c.len() <= MAX_COMPONENT
        && c != b"."
        && c != b".."
        && !c.contains(&b'/')
        && !c.contains(&0)
}

/// Decodes the ref segment once and checks it.
fn decode_ref(segment: &str, hash: gix::hash::Kind) -> Result<RefName, String> {
    let bytes = decode(segment);
    if let Some(id) = hex_id(&bytes, hash) {
        return Ok(RefName::Id(id));
    }
    if !valid_ref_name(bytes.as_bstr()) {
        return Err(format!("{segment:?} is not a served ref name"));
    }
    Ok(RefName::Name(bytes.into()))
}

/// A raw (unencoded) ref name, as a completion context carries it.
pub(crate) fn raw_ref(name: &str, hash: gix::hash::Kind) -> Option<RefName> {
    if let Some(id) = hex_id(name.as_bytes(), hash) {
        return Some(RefName::Id(id));
    }
    valid_ref_name(name.as_bytes().as_bstr()).then(|| RefName::Name(name.into()))
}

/// A full object id in lowercase hexadecimal (one spelling per commit).
fn hex_id(bytes: &[u8], hash: gix::hash::Kind) -> Option<ObjectId> {
    let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    if bytes.len() != hash.len_in_hex() || !bytes.iter().all(lower_hex) {
        return None;
    }
    ObjectId::from_hex(bytes).ok()
}

/// Whether `name` may be looked up as a reference: git's reference-name rules, and no
/// component starting with `-` (an option) or `.`.
pub(crate) fn valid_ref_name(name: &BStr) -> bool {
    name.len() <= MAX_REF_NAME
        && gix::validate::reference::name_partial(name).is_ok()
        && name
            .split(|&b| b == b'/')
            .all(|c| !c.is_empty() && !c.starts_with(b"-") && !c.starts_with(b"."))
}

/// Whether a full reference name is one this provider serves: `HEAD`, a branch or a tag
/// whose name passes [`valid_ref_name`].
pub(crate) fn is_served(full: &BStr) -> bool {
    full == "HEAD"
        || (full.starts_with(b"refs/heads/") || full.starts_with(b"refs/tags/"))
            && gix::validate::reference::name(full).is_ok()
            && valid_ref_name(full)
}

/// The full names a ref name may stand for, in the order git's own lookup tries them
/// (`git rev-parse`: the name itself, `refs/<name>`, `refs/tags/<name>`,
/// `refs/heads/<name>`), restricted to the served references: a tag shadows a branch of
/// the same name, and `heads/x` / `tags/x` always name one of them.
pub(crate) fn candidates(name: &BStr) -> Vec<BString> {
    let mut out = Vec::with_capacity(4);
    if name == "HEAD" || name.starts_with(b"refs/heads/") || name.starts_with(b"refs/tags/") {
        out.push(name.to_owned());
    }
    if name.starts_with(b"heads/") || name.starts_with(b"tags/") {
        out.push(prefixed(b"refs/", name));
    }
    out.push(prefixed(b"refs/tags/", name));
    out.push(prefixed(b"refs/heads/", name));
    out
}

fn prefixed(prefix: &[u8], name: &BStr) -> BString {
    let mut v = Vec::with_capacity(prefix.len() + name.len());
    v.extend_from_slice(prefix);
    v.extend_from_slice(name);
    v.into()
}

/// The full name `name` stands for among the references `exists` knows of.
pub(crate) fn resolve_in(name: &BStr, exists: impl Fn(&BStr) -> bool) -> Option<BString> {
    candidates(name)
        .into_iter()
        .find(|c| is_served(c.as_bstr()) && exists(c.as_bstr()))
}

/// The shortest name that resolves back to `full` among the references `exists` knows of
/// (like `git for-each-ref --format=%(refname:short)`): `main`, or `heads/main` when a tag
/// `main` exists, or the full name. `None` if no name of it can be served.
pub(crate) fn short_name(
    full: &BStr,
    hash: gix::hash::Kind,
    exists: impl Fn(&BStr) -> bool,
) -> Option<BString> {
    if !is_served(full) {
        return None;
    }
    let rest = full.strip_prefix(b"refs/").unwrap_or(full);
    let short = rest
        .strip_prefix(b"heads/")
        .or_else(|| rest.strip_prefix(b"tags/"))
        .unwrap_or(rest);
    [short, rest, full.as_bytes()]
        .into_iter()
        .map(ByteSlice::as_bstr)
        .find(|c| {
            hex_id(c, hash).is_none()
                && valid_ref_name(c)
                && resolve_in(c, &exists).is_some_and(|r| r == full)
        })
        .map(ToOwned::to_owned)
}

/// Appends a ref name as one URI segment, as RFC 6570 simple expansion (`{ref}`) writes
/// it, so that a client-expanded template and a listed URI agree.
pub(crate) fn push_ref(out: &mut String, name: &RefName) {
    match name {
        RefName::Id(id) => out.push_str(&id.to_hex().to_string()),
        RefName::Name(n) => push_expanded(out, n),
    }
}

/// Appends a path component as one URI segment (as the filesystem provider writes it).
pub(crate) fn push_component(out: &mut String, name: &[u8]) {
    push_path_segment(out, name);
}

/// The URI of `target` under `prefix` (canonical: one spelling per resource).
pub(crate) fn uri(prefix: &str, name: &RefName, path: &[BString]) -> String {
    let mut s = String::from(prefix);
    push_ref(&mut s, name);
    for c in path {
        s.push('/');
        push_component(&mut s, c);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    const SHA1: gix::hash::Kind = gix::hash::Kind::Sha1;

    fn name(s: &str) -> RefName {
        RefName::Name(s.into())
    }

    #[test]
    fn uris_split_into_a_ref_and_a_path() {
        assert_eq!(parse("", SHA1), Ok(Target::Repo));
        assert_eq!(parse("main", SHA1), Ok(Target::Ref(name("main"))));
        assert_eq!(parse("main/", SHA1), Ok(Target::Ref(name("main"))));
        assert_eq!(
            parse("feature%2Fx/src/a%20b.rs", SHA1),
            Ok(Target::Entry(
                name("feature/x"),
                vec!["src".into(), "a b.rs".into()]
            ))
        );
        let id = "0123456789abcdef0123456789abcdef01234567";
        assert!(matches!(parse(id, SHA1), Ok(Target::Ref(RefName::Id(_)))));
        // Uppercase hex is a name (looked up as a ref), not a second spelling of an id.
        assert_eq!(
            parse(&id.to_uppercase(), SHA1),
            Ok(Target::Ref(name(&id.to_uppercase())))
        );
    }

    #[test]
    fn option_like_revision_like_and_traversing_names_are_refused() {
        for bad in [
            "--output=x",
            "--output%3Dx",
            "-c",
            "..%2Fx",
            "HEAD~1",
            "HEAD%7E1",
            "main%5E",
            "main%3Asecret",
            "%40%7B-1%7D",
            "%40",
            "refs%2F..%2Fx",
            "a%00b",
            "a%0Ab",
            "a%20b",
            "main.lock",
            ".hidden",
            "a%2F.b",
            "a%2F-b",
            "%2Fmain",
            "main%2F",
            "a%2F%2Fb",
            "*",
            "a%5Bb",
            "a%5Cb",
            "a?x",
            "a#x",
        ] {
            assert!(parse(bad, SHA1).is_err(), "{bad}");
            assert!(parse(&format!("{bad}/file"), SHA1).is_err(), "{bad}/file");
        }
    }

    #[test]
    fn path_traversal_is_refused() {
        for bad in [
            "main/..",
            "main/../x",
            "main/a/%2E%2E/b",
            "main/.",
            "main//a",
            "main/a%2F..%2Fb",
            "main/%2F",
            "main/a%00",
        ] {
            assert!(parse(bad, SHA1).is_err(), "{bad}");
        }
    }

    #[test]
    fn lookup_follows_git_order_within_heads_and_tags() {
        let set: BTreeSet<BString> = [
            "HEAD",
            "refs/heads/main",
            "refs/tags/main",
            "refs/heads/dev",
        ]
        .into_iter()
        .map(BString::from)
        .collect();
        let exists = |n: &BStr| set.contains(n);
        let r = |n: &str| resolve_in(n.into(), exists).map(|b| b.to_string());
        assert_eq!(r("main").as_deref(), Some("refs/tags/main"), "tags first");
        assert_eq!(r("heads/main").as_deref(), Some("refs/heads/main"));
        assert_eq!(r("tags/main").as_deref(), Some("refs/tags/main"));
        assert_eq!(r("refs/heads/main").as_deref(), Some("refs/heads/main"));
        assert_eq!(r("dev").as_deref(), Some("refs/heads/dev"));
        assert_eq!(r("HEAD").as_deref(), Some("HEAD"));
        assert_eq!(r("nope"), None);
        let s = |f: &str| short_name(f.into(), SHA1, exists).map(|b| b.to_string());
        assert_eq!(s("refs/heads/main").as_deref(), Some("heads/main"));
        assert_eq!(s("refs/tags/main").as_deref(), Some("main"));
        assert_eq!(s("refs/heads/dev").as_deref(), Some("dev"));
        assert_eq!(s("HEAD").as_deref(), Some("HEAD"));
        assert_eq!(s("refs/remotes/origin/main"), None, "not served");
        assert_eq!(s("refs/heads/-x"), None, "never served");
    }

    #[test]
    fn a_branch_named_like_an_id_is_listed_by_its_qualified_name() {
        let hex = "0123456789abcdef0123456789abcdef01234567";
        let full = format!("refs/heads/{hex}");
        let exists = |n: &BStr| n == full.as_bytes();
        assert_eq!(
            short_name(full.as_bytes().as_bstr(), SHA1, exists).map(|b| b.to_string()),
            Some(format!("heads/{hex}"))
        );
    }

    #[test]
    fn names_encode_as_one_segment_and_decode_back() {
        let n = name("feature/x+y%");
        let u = uri("git:///", &n, &["a b".into(), "c#?.md".into()]);
        assert_eq!(u, "git:///feature%2Fx%2By%25/a%20b/c%23%3F.md");
        assert_eq!(
            parse(u.strip_prefix("git:///").unwrap(), SHA1),
            Ok(Target::Entry(n, vec!["a b".into(), "c#?.md".into()]))
        );
    }
}
