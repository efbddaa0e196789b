//! SEP-2564's list filter, compiled: which resources a `resources/list` (and which
//! templates a `resources/templates/list`) with `params.filter` returns, and the bound on
//! the work one filtered page may cost.
//!
//! # The patterns
//!
//! `namePatterns` are matched against an item's `name`, `uriPatterns` against its `uri`
//! (a template's `uriTemplate`). The fields present are ANDed, the patterns within one
//! field ORed; an absent or empty field does not filter. A pattern matches the whole
//! text, exactly as the server writes it (a URI percent-encoded, never decoded), case
//! sensitively, one Unicode character at a time:
//!
//! | syntax | in a name | in a URI |
//! |---|---|---|
//! | `*` | any run of characters | any run of characters but `/` |
//! | `?` | any one character | any one character but `/` |
//! | `**` as a whole segment (`**/x`, `a/**/b`, `a/**`, `**`) | as `*` | any run of segments: `a/**/b` matches `a/b` and `a/x/y/b`, `a/**` everything below `a/` |
//! | `**` elsewhere | as `*` | as `*` |
//! | `[abc]`, `[a-z]`, `[!abc]` (or `[^abc]`) | one character in (not in) the set; `]` first is literal | the same, never `/` |
//! | `\c` | the character `c` itself (`\*`, `\?`, `\[`, `\\`) | the same |
//!
//! Every other character stands for itself: `{`, `}` and `,` included, so a URI pattern
//! can name a template as it is written (`db://{db}/*`); there are no `{a,b}`
//! alternatives, since a field already takes several patterns.
//!
//! A field holds at most [`MAX_PATTERNS`] patterns of at most [`MAX_PATTERN_BYTES`] bytes,
//! none empty. A pattern that breaks a rule, does not parse (an unclosed `[`, a range
//! `z-a`, a `\` at the end) or is too complex (compiled, over 64 KiB: about a hundred
//! wildcards) is refused, and the request is answered with `-32602` naming the field, the
//! pattern's index and why.
//!
//! # Bounded work
//!
//! A filter that matches little must not make one request walk a whole tree. A filtered
//! page examines at most [`Filter::scan`] candidates, 10,000, fewer with many patterns
//! (and the engine makes a bounded number of provider calls): it may come back short, or
//! empty, with a cursor that goes on after the last candidate examined. [`page`] is that
//! rule over a keyset walk, for providers that apply the filter in their own walk
//! (`ListRequest::filter`); the engine applies it to whatever a provider returns, so a
//! provider that ignores it is still correct.
//!
//! Invariants: matching is linear in the text (each pattern becomes one `regex`, whose
//! matching never backtracks, compiled within a size limit); a cursor is bound to the
//! filter it was issued under (`Filter::key` is part of its sealed scope).

use std::fmt;

use regex::{Regex, RegexBuilder};
use rsrc_protocol::Resource;
use rsrc_protocol::resources::ListFilter;

use crate::keyset::{self, Paged};

/// Most patterns in one field of a filter.
pub const MAX_PATTERNS: usize = 32;
/// Longest pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 512;
/// Most candidates one filtered page examines.
pub const MAX_SCAN: usize = 10_000;
/// Most (candidate, pattern) pairs one filtered page matches: with many patterns a page
/// examines fewer candidates, at least [`MIN_SCAN`]. Matching one pattern costs a few
/// nanoseconds per character of the text; this keeps a page's matching within tens of
/// milliseconds for ordinary names and URIs, whatever the patterns.
const MATCH_BUDGET: usize = 40_000;
/// Fewest candidates a filtered page examines (unless told fewer, [`Filter::with_scan`]).
pub const MIN_SCAN: usize = 1_000;
/// Largest compiled form of one pattern.
const COMPILED_LIMIT: usize = 64 << 10;

/// Why a filter was refused: the field, the pattern (by index) when one is to blame, and
/// the reason. Its text names all three: `filter.namePatterns[1] "[a": a "[" is not
/// closed by "]"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    field: &'static str,
    /// The pattern's index and (the start of) its text.
    pattern: Option<(usize, String)>,
    reason: String,
}

impl FilterError {
    /// Why, without the field and pattern.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "filter.{}", self.field)?;
        if let Some((i, shown)) = &self.pattern {
            write!(f, "[{i}] {shown}")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for FilterError {}

/// How `/` reads in the text a field matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// A name: `/` is a character like any other.
    Name,
    /// A URI: `/` separates segments.
    Uri,
}

/// The compiled patterns of one field.
#[derive(Debug, Clone)]
struct Field {
    /// One anchored regex per pattern: the automata of patterns ORed together multiply
    /// (a lazy DFA over 32 patterns with stars thrashes), one per pattern stays small.
    regexes: Vec<Regex>,
    /// Each pattern's literal start (up to its first wildcard), for
    /// [`Filter::may_match_below`].
    starts: Vec<String>,
}

/// A compiled SEP-2564 filter: what a provider sees in
/// [`ListRequest::filter`](crate::ListRequest::filter).
///
/// ```
/// use rsrc::Filter;
/// use rsrc::protocol::resources::ListFilter;
///
/// let filter = Filter::new(&ListFilter {
///     name_patterns: Some(vec!["*.md".into(), "README*".into()]),
///     uri_patterns: Some(vec!["file:///docs/**".into()]),
/// })
/// .unwrap()
/// .expect("it filters");
/// assert!(filter.matches("guide.md", "file:///docs/user/guide.md"));
/// assert!(!filter.matches("guide.md", "file:///src/guide.md"));
/// assert!(!filter.may_match_below("file:///src/"));
/// ```
#[derive(Debug, Clone)]
pub struct Filter {
    names: Option<Field>,
    uris: Option<Field>,
    /// The filter as the cursor binds it.
    key: String,
    scan: usize,
}

impl Filter {
    /// Compiles `filter`; `Ok(None)` when it filters nothing (no field, or only empty
    /// ones).
    pub fn new(filter: &ListFilter) -> Result<Option<Filter>, FilterError> {
        let names = compile("namePatterns", filter.name_patterns.as_deref(), Text::Name)?;
        let uris = compile("uriPatterns", filter.uri_patterns.as_deref(), Text::Uri)?;
        if names.is_none() && uris.is_none() {
            return Ok(None);
        }
        // The fields that filter, in one fixed order: equal filters have equal keys.
        let normal = ListFilter {
            name_patterns: names.as_ref().and(filter.name_patterns.clone()),
            uri_patterns: uris.as_ref().and(filter.uri_patterns.clone()),
        };
        let key = serde_json::to_string(&normal).unwrap_or_default();
        let patterns = [&names, &uris]
            .iter()
            .filter_map(|f| f.as_ref())
            .map(|f| f.regexes.len())
            .sum::<usize>();
        Ok(Some(Filter {
            names,
            uris,
            key,
            scan: (MATCH_BUDGET / patterns.max(1)).clamp(MIN_SCAN, MAX_SCAN),
        }))
    }

    /// The same filter examining at most `scan` (at least 1) candidates per page, or its
    /// own bound if that is fewer.
    #[must_use]
    pub fn with_scan(mut self, scan: usize) -> Filter {
        self.scan = self.scan.min(scan).max(1);
        self
    }

    /// Most candidates one page examines: [`MAX_SCAN`], fewer with many patterns (at most
    /// 40,000 candidate-pattern pairs, at least [`MIN_SCAN`] candidates). A provider
    /// applying the filter stops there and returns what it found, with the position after
    /// the last candidate it examined.
    pub fn scan(&self) -> usize {
        self.scan
    }

    /// Whether the filter looks at names.
    pub fn filters_names(&self) -> bool {
        self.names.is_some()
    }

    /// Whether the filter looks at URIs.
    pub fn filters_uris(&self) -> bool {
        self.uris.is_some()
    }

    /// Whether `name` matches `namePatterns` (true without them).
    pub fn matches_name(&self, name: &str) -> bool {
        self.names.as_ref().is_none_or(|f| f.is_match(name))
    }

    /// Whether `uri` matches `uriPatterns` (true without them).
    pub fn matches_uri(&self, uri: &str) -> bool {
        self.uris.as_ref().is_none_or(|f| f.is_match(uri))
    }

    /// Whether an item named `name` at `uri` (a template's `uriTemplate`) matches.
    pub fn matches(&self, name: &str, uri: &str) -> bool {
        self.matches_name(name) && self.matches_uri(uri)
    }

    /// Whether `resource` matches.
    pub fn matches_resource(&self, resource: &Resource) -> bool {
        self.matches(&resource.name, &resource.uri)
    }

    /// Whether some URI that starts with `prefix` could match `uriPatterns`: false only
    /// when none can, so a walk may skip everything under `prefix` (a directory's URI
    /// followed by `/`).
    pub fn may_match_below(&self, prefix: &str) -> bool {
        self.uris.as_ref().is_none_or(|f| {
            f.starts
                .iter()
                .any(|s| prefix.starts_with(s.as_str()) || s.starts_with(prefix))
        })
    }

    /// The filter as a cursor binds it: equal for equal filters.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }
}

impl Field {
    fn is_match(&self, text: &str) -> bool {
        self.regexes.iter().any(|r| r.is_match(text))
    }
}

/// One field's patterns compiled; `None` when the field does not filter.
fn compile(
    field: &'static str,
    patterns: Option<&[String]>,
    text: Text,
) -> Result<Option<Field>, FilterError> {
    let Some(patterns) = patterns.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if patterns.len() > MAX_PATTERNS {
        return Err(FilterError {
            field,
            pattern: None,
            reason: format!(
                "{} patterns; at most {MAX_PATTERNS} are accepted",
                patterns.len()
            ),
        });
    }
    let mut regexes = Vec::with_capacity(patterns.len());
    let mut starts = Vec::with_capacity(patterns.len());
    for (i, pattern) in patterns.iter().enumerate() {
        let refuse = |why: &str| {
            let shown: String = pattern.chars().take(64).collect();
            let cut = if shown.len() < pattern.len() {
                "…"
            } else {
                ""
            };
            FilterError {
                field,
                pattern: Some((i, format!("{shown:?}{cut}"))),
                reason: why.to_owned(),
            }
        };
        if pattern.is_empty() {
            return Err(refuse("an empty pattern matches nothing"));
        }
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(refuse(&format!(
                "longer than {MAX_PATTERN_BYTES} bytes ({} bytes)",
                pattern.len()
            )));
        }
        let re = translate(pattern, text).map_err(|why| refuse(&why))?;
        let regex = RegexBuilder::new(&format!("(?s)^(?:{re})$"))
            .size_limit(COMPILED_LIMIT)
            .build()
            .map_err(|_| refuse("too complex to match within the server's limits"))?;
        regexes.push(regex);
        starts.push(literal_start(pattern));
    }
    Ok(Some(Field { regexes, starts }))
}

/// A pattern's literal start: the text before its first wildcard, class or escape.
fn literal_start(pattern: &str) -> String {
    pattern
        .chars()
        .take_while(|c| !matches!(c, '*' | '?' | '[' | '\\'))
        .collect()
}

/// Writes `c` so that the regex matches it literally.
fn push_literal(re: &mut String, c: char) {
    re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
}

/// One pattern as a regex (unanchored; the caller anchors it), or why it is not a
/// pattern.
fn translate(pattern: &str, text: Text) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let one = match text {
        Text::Name => ".",
        Text::Uri => "[^/]",
    };
    let mut re = String::with_capacity(pattern.len() * 2);
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => {
                let run = chars[i..].iter().take_while(|&&c| c == '*').count();
                let end = i + run;
                let whole_segment = run >= 2
                    && (i == 0 || chars[i - 1] == '/')
                    && (end == chars.len() || chars[end] == '/');
                if text == Text::Uri && whole_segment {
                    if end == chars.len() {
                        // `**` alone, or a final `/**`: anything (below the `/`).
                        re.push_str(".*");
                        i = end;
                    } else {
                        // `**/` first, or `/**/`: any number of whole segments, none too.
                        re.push_str("(?:.*/)?");
                        i = end + 1;
                    }
                } else {
                    re.push_str(one);
                    re.push('*');
                    i = end;
                }
            }
            '?' => {
                re.push_str(one);
                i += 1;
            }
            '[' => i = class(&chars, i, text, &mut re)?,
            '\\' => {
                let c = chars
                    .get(i + 1)
                    .ok_or("a \"\\\" at the end escapes nothing")?;
                push_literal(&mut re, *c);
                i += 2;
            }
            c => {
                push_literal(&mut re, c);
                i += 1;
            }
        }
    }
    Ok(re)
}

/// The class opening at `chars[open]` (a `[`), written to `re`; returns the index after
/// its `]`.
fn class(chars: &[char], open: usize, text: Text, re: &mut String) -> Result<usize, String> {
    const UNCLOSED: &str = "a \"[\" is not closed by \"]\"";
    let mut i = open + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    // One character of the set, escaped with `\` or not; the index after it.
    let member = |i: usize| -> Result<(char, usize), String> {
        match chars.get(i) {
            Some('\\') => chars
                .get(i + 1)
                .map(|&c| (c, i + 2))
                .ok_or_else(|| UNCLOSED.to_owned()),
            Some(&c) => Ok((c, i + 1)),
            None => Err(UNCLOSED.to_owned()),
        }
    };
    let mut set = String::new();
    let mut first = true;
    loop {
        if chars.get(i) == Some(&']') && !first {
            i += 1;
            break;
        }
        first = false;
        let (lo, after) = member(i)?;
        i = after;
        let hi = if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&c| c != ']') {
            let (hi, after) = member(i + 1)?;
            i = after;
            if hi < lo {
                return Err(format!("the range {lo}-{hi} is empty"));
            }
            hi
        } else {
            lo
        };
        set.push_str(&format!(
            "\\x{{{:X}}}-\\x{{{:X}}}",
            u32::from(lo),
            u32::from(hi)
        ));
    }
    re.push_str(&match (negated, text) {
        (false, Text::Name) => format!("[{set}]"),
        (false, Text::Uri) => format!("[{set}&&[^/]]"),
        (true, Text::Name) => format!("[^{set}]"),
        (true, Text::Uri) => format!("[^{set}/]"),
    });
    Ok(i)
}

/// One page of a keyset walk under `filter`: the items of `rest` (in order, after the
/// position) that `keep` accepts, at most `limit`, drawing at most [`Filter::scan`] items.
/// `next` is where the walk goes on when it may: after the last item drawn, kept or not
/// (an item examined is never examined again by the next page). So a page may be short,
/// or empty, with a `next`; every page that has a `next` drew at least one item, so the
/// walk always moves on. Without a filter it is [`keyset::page`].
pub fn page<T, P>(
    filter: Option<&Filter>,
    rest: impl IntoIterator<Item = T>,
    limit: usize,
    mut keep: impl FnMut(&Filter, &T) -> bool,
    position: impl Fn(&T) -> P,
) -> Paged<T, P> {
    let Some(filter) = filter else {
        return keyset::page(rest, limit, position);
    };
    let limit = limit.max(1);
    let mut items = Vec::new();
    // The last item drawn when it was not kept.
    let mut passed: Option<T> = None;
    for (drawn, item) in rest.into_iter().enumerate() {
        let full = items.len() == limit;
        if drawn == filter.scan() || (full && keep(filter, &item)) {
            let next = passed.as_ref().or(items.last()).map(&position);
            return Paged { items, next };
        }
        if !full && keep(filter, &item) {
            items.push(item);
            passed = None;
        } else {
            passed = Some(item);
        }
    }
    Paged { items, next: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(names: &[&str], uris: &[&str]) -> Filter {
        let field =
            |p: &[&str]| (!p.is_empty()).then(|| p.iter().map(|s| (*s).to_owned()).collect());
        Filter::new(&ListFilter {
            name_patterns: field(names),
            uri_patterns: field(uris),
        })
        .unwrap()
        .unwrap()
    }

    fn refused(names: &[&str], uris: &[&str]) -> String {
        let field = |p: &[&str]| Some(p.iter().map(|s| (*s).to_owned()).collect());
        Filter::new(&ListFilter {
            name_patterns: field(names),
            uri_patterns: field(uris),
        })
        .unwrap_err()
        .to_string()
    }

    #[test]
    fn a_star_stays_within_a_uri_segment_and_spans_a_name() {
        let f = filter(&[], &["file:///*.md"]);
        assert!(f.matches_uri("file:///a.md"));
        assert!(!f.matches_uri("file:///docs/a.md"));
        let n = filter(&["*.md"], &[]);
        assert!(n.matches_name("a.md"));
        assert!(n.matches_name("dir/a.md"), "a name has no segments");
        assert!(n.matches_name("line\nbreak.md"));
        assert!(!n.matches_name("a.mdx"), "the whole text matches");
    }

    #[test]
    fn a_double_star_segment_spans_any_number_of_segments() {
        let f = filter(&[], &["file:///docs/**"]);
        assert!(f.matches_uri("file:///docs/a"));
        assert!(f.matches_uri("file:///docs/a/b/c.md"));
        assert!(!f.matches_uri("file:///docs"));
        assert!(!f.matches_uri("file:///docsx/a"));
        let mid = filter(&[], &["file:///a/**/b.md"]);
        for yes in ["file:///a/b.md", "file:///a/x/b.md", "file:///a/x/y/b.md"] {
            assert!(mid.matches_uri(yes), "{yes}");
        }
        assert!(!mid.matches_uri("file:///a/xb.md"));
        let lead = filter(&[], &["**/*.md"]);
        assert!(lead.matches_uri("file:///x/y.md"));
        assert!(lead.matches_uri("y.md"));
        assert!(!lead.matches_uri("file:///x/y.txt"));
        assert!(filter(&[], &["**"]).matches_uri("anything://at/all"));
        // Not a whole segment: one segment's run.
        let part = filter(&[], &["file:///a**"]);
        assert!(part.matches_uri("file:///abc"));
        assert!(!part.matches_uri("file:///a/c"));
    }

    #[test]
    fn question_marks_and_classes_match_one_unicode_character() {
        let f = filter(&["r?sum?.pdf", "[éè]t[!a]"], &[]);
        assert!(f.matches_name("résumé.pdf"));
        assert!(f.matches_name("étb"));
        assert!(!f.matches_name("éta"));
        assert!(!f.matches_name("et"));
        let ranges = filter(&["[a-c]?", "[]x]", "[!]]", "[a-]"], &[]);
        for yes in ["b1", "]", "x", "q", "-"] {
            assert!(ranges.matches_name(yes), "{yes}");
        }
        assert!(!ranges.matches_name("d1"));
        let u = filter(&[], &["a?b", "c[!x]d", "e[/]f"]);
        assert!(u.matches_uri("a.b"));
        assert!(!u.matches_uri("a/b"), "? never matches /");
        assert!(!u.matches_uri("c/d"), "nor does a negated class");
        assert!(!u.matches_uri("e/f"), "nor any class");
    }

    #[test]
    fn escapes_braces_and_case_are_literal() {
        let f = filter(&["\\*\\?\\[x\\]\\\\"], &["db://{db}/*"]);
        assert!(f.matches_name("*?[x]\\"));
        assert!(!f.matches_name("a?[x]\\"));
        assert!(f.matches_uri("db://{db}/{table}"));
        let a = filter(&["README*"], &["x://{a,b}"]);
        assert!(!a.matches_name("readme.md"), "case-sensitive");
        assert!(a.matches_uri("x://{a,b}"));
        assert!(!a.matches_uri("x://a"), "no alternatives");
        let dots = filter(&["a.b", "(x)|y+"], &[]);
        assert!(dots.matches_name("a.b") && !dots.matches_name("axb"));
        assert!(dots.matches_name("(x)|y+") && !dots.matches_name("y"));
    }

    #[test]
    fn fields_are_anded_and_patterns_ored() {
        let f = filter(&["*.md", "*.txt"], &["file:///docs/**"]);
        assert!(f.matches("a.md", "file:///docs/a.md"));
        assert!(f.matches("a.txt", "file:///docs/a.txt"));
        assert!(!f.matches("a.rs", "file:///docs/a.rs"));
        assert!(!f.matches("a.md", "file:///src/a.md"));
    }

    #[test]
    fn empty_fields_filter_nothing_and_bad_patterns_are_refused() {
        assert!(Filter::new(&ListFilter::default()).unwrap().is_none());
        let empty = ListFilter {
            name_patterns: Some(Vec::new()),
            uri_patterns: None,
        };
        assert!(Filter::new(&empty).unwrap().is_none());
        for (bad, why) in [
            ("[a", "not closed"),
            ("[z-a]", "range z-a is empty"),
            ("a\\", "escapes nothing"),
            ("", "empty pattern"),
            ("[", "not closed"),
            ("[]", "not closed"),
        ] {
            let e = refused(&["ok", bad], &[]);
            assert!(e.starts_with("filter.namePatterns[1]"), "{bad}: {e}");
            assert!(e.contains(why), "{bad}: {e}");
        }
        let many = vec!["a"; MAX_PATTERNS + 1];
        assert_eq!(
            refused(&[], &many),
            "filter.uriPatterns: 33 patterns; at most 32 are accepted"
        );
        let long = "a".repeat(MAX_PATTERN_BYTES + 1);
        let e = refused(&[], &[&long]);
        assert!(
            e.starts_with("filter.uriPatterns[0]") && e.contains("longer than"),
            "{e}"
        );
        assert!(e.len() < 200, "a long pattern is shown cut: {e}");
    }

    #[test]
    fn equal_filters_have_equal_keys() {
        let a = filter(&["*.md"], &[]);
        let b = Filter::new(&ListFilter {
            name_patterns: Some(vec!["*.md".into()]),
            uri_patterns: Some(Vec::new()),
        })
        .unwrap()
        .unwrap();
        assert_eq!(a.key(), b.key());
        assert_ne!(a.key(), filter(&["*.txt"], &[]).key());
        assert_ne!(filter(&[], &["*.md"]).key(), a.key(), "the field counts");
    }

    #[test]
    fn a_subtree_is_skipped_only_when_no_uri_pattern_can_match_below_it() {
        let f = filter(&[], &["file:///docs/**", "file:///src/*.rs"]);
        assert!(f.may_match_below("file:///"));
        assert!(f.may_match_below("file:///docs/"));
        assert!(f.may_match_below("file:///docs/deep/"));
        assert!(f.may_match_below("file:///src/"));
        assert!(!f.may_match_below("file:///target/"));
        assert!(!f.may_match_below("file:///do/"));
        assert!(filter(&[], &["*/x"]).may_match_below("anything/"));
        assert!(
            filter(&["x"], &[]).may_match_below("anything/"),
            "names only"
        );
    }

    #[test]
    fn many_patterns_examine_fewer_candidates_a_page() {
        assert_eq!(filter(&["a"], &["b"]).scan(), MAX_SCAN);
        let many: Vec<String> = (0..20).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(filter(&many, &many).scan(), MIN_SCAN);
        assert_eq!(filter(&many[..8], &[]).scan(), 5_000);
        assert_eq!(filter(&["a"], &[]).with_scan(20_000).scan(), MAX_SCAN);
        assert_eq!(filter(&["a"], &[]).with_scan(0).scan(), 1);
    }

    #[test]
    fn a_filtered_page_stops_at_its_limit_or_its_scan() {
        let f = filter(&["*0"], &[]).with_scan(25);
        let keep = |f: &Filter, n: &u32| f.matches_name(&n.to_string());
        // 0, 10, 20 within the first 25 drawn; the walk goes on after 24.
        let p = page(Some(&f), 0..100u32, 5, keep, |n| *n);
        assert_eq!((p.items, p.next), (vec![0, 10, 20], Some(24)));
        // The limit reached: the next page starts after the last item drawn, 19.
        let p = page(Some(&f), 0..100u32, 2, keep, |n| *n);
        assert_eq!((p.items, p.next), (vec![0, 10], Some(19)));
        // Nothing left that matches: no next, even with items left over.
        let p = page(Some(&f), 95..100u32, 2, keep, |n| *n);
        assert_eq!((p.items, p.next), (vec![], None));
        // A scan of one still moves on.
        let one = filter(&["nothing"], &[]).with_scan(1);
        let p = page(Some(&one), 7..9u32, 3, keep, |n| *n);
        assert_eq!((p.items, p.next), (vec![], Some(7)));
        // Without a filter, a keyset page.
        let p = page(None, 0..10u32, 3, keep, |n| *n);
        assert_eq!((p.items, p.next), (vec![0, 1, 2], Some(2)));
    }

    #[test]
    fn a_filtered_walk_returns_every_match_once() {
        let f = filter(&["*3*"], &[]).with_scan(7);
        let keep = |f: &Filter, n: &u32| f.matches_name(&n.to_string());
        let all: Vec<u32> = (0..200).collect();
        let mut seen = Vec::new();
        let mut pos: Option<u32> = None;
        for _ in 0..100 {
            let rest = keyset::after(&all, pos.as_ref(), |n| n);
            let p = page(Some(&f), rest.iter().copied(), 4, keep, |n| *n);
            seen.extend(p.items);
            match p.next {
                Some(n) => {
                    assert!(pos.is_none_or(|p| n > p), "the walk moves on");
                    pos = Some(n);
                }
                None => break,
            }
        }
        let expected: Vec<u32> = all
            .into_iter()
            .filter(|n| n.to_string().contains('3'))
            .collect();
        assert_eq!(seen, expected);
    }
}
