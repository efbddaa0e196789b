//! The workloads: what is asked of a server, how many times, and the check of every
//! answer against the fixture.
//!
//! Invariant: an operation counts only once its answer is checked; the first wrong answer
//! ends the workload with an error naming it, and nothing measured before it is reported.
//! The files read are drawn from one fixed seed, so every server gets the same sequence.
//! An answer is decoded once, into views that borrow from it (`json`), only as far as its
//! checks need: a listing's entries are never copied, a text or blob without escapes is
//! compared where it lies in the message, and a blob is compared as the base64 of the
//! file (decoded only when it differs).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use base64::Engine as _;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use crate::conn::{Answer, Conn, Error};
use crate::fixture::{self, Fixture};
use crate::json::{self, Array, Decoded, Object, Raw, Str, U64};

/// Every workload, in the order they run.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub(crate) enum Workload {
    ListAll,
    ReadSmall,
    ReadSmallPipelined,
    ReadBlob,
    ReadBigText,
    TemplatesList,
    ReadViaTemplate,
}

pub(crate) const ALL: [Workload; 7] = [
    Workload::ListAll,
    Workload::ReadSmall,
    Workload::ReadSmallPipelined,
    Workload::ReadBlob,
    Workload::ReadBigText,
    Workload::TemplatesList,
    Workload::ReadViaTemplate,
];

impl Workload {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Workload::ListAll => "list-all",
            Workload::ReadSmall => "read-small",
            Workload::ReadSmallPipelined => "read-small-pipelined",
            Workload::ReadBlob => "read-1m-blob",
            Workload::ReadBigText => "read-10m-text",
            Workload::TemplatesList => "templates-list",
            Workload::ReadViaTemplate => "read-via-template",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        ALL.into_iter().find(|w| w.name() == s)
    }
}

/// How many operations each workload makes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counts {
    pub(crate) warmup: usize,
    pub(crate) listings: usize,
    pub(crate) small: usize,
    pub(crate) pipelined: usize,
    pub(crate) in_flight: usize,
    pub(crate) blob: usize,
    pub(crate) big: usize,
    pub(crate) templates: usize,
    pub(crate) via_template: usize,
}

impl Counts {
    /// Sized so that a round of every server, the slowest SDKs included, takes minutes.
    pub(crate) const FULL: Counts = Counts {
        warmup: 200,
        listings: 20,
        small: 2_000,
        pipelined: 5_000,
        in_flight: 64,
        blob: 50,
        big: 10,
        templates: 500,
        via_template: 1_000,
    };
    /// A smoke pass: every path taken, no figure meaningful.
    pub(crate) const QUICK: Counts = Counts {
        warmup: 10,
        listings: 1,
        small: 50,
        pipelined: 100,
        in_flight: 16,
        blob: 2,
        big: 1,
        templates: 10,
        via_template: 20,
    };
}

/// What a workload measured.
#[derive(Default)]
pub(crate) struct Measured {
    pub(crate) ops: usize,
    pub(crate) requests: usize,
    pub(crate) seconds: f64,
    /// Microseconds per request (per page, for listings).
    pub(crate) latencies_us: Vec<u64>,
    pub(crate) bytes: usize,
    /// Facts worth a column: pages per listing, whether sizes were listed, the template.
    pub(crate) notes: Vec<(&'static str, Value)>,
}

impl Measured {
    /// Sends one request, timed: its latency, the bytes of its answer and the request are
    /// counted here; the result is the caller's to check (an operation counts once it is).
    async fn call(&mut self, conn: &Conn, method: &str, params: Value) -> Result<Answer, Error> {
        let started = Instant::now();
        let answer = conn.call(method, params).await?;
        self.latencies_us.push(started.elapsed().as_micros() as u64);
        self.bytes += answer.bytes;
        self.requests += 1;
        Ok(answer)
    }
}

/// A resource's URI: the fixture's paths need no escaping.
pub(crate) fn uri(path: &str) -> String {
    format!("file:///{path}")
}

/// Reads `count` small files one after another (with `template`, through it), checked.
async fn reads(
    conn: &Conn,
    fixture: &Fixture,
    picks: &[usize],
    template: Option<&str>,
    out: &mut Measured,
) -> Result<(), Error> {
    for &index in picks {
        let path = fixture::small_path(index);
        let uri = match template {
            Some(t) => expand(t, &path)?,
            None => uri(&path),
        };
        let answer = out
            .call(conn, "resources/read", json!({"uri": uri}))
            .await?;
        let expected = Expected::Text(fixture.bytes(&path).expect("a fixture file"));
        check_read(&answer, &uri, expected)?;
        out.ops += 1;
    }
    Ok(())
}

/// The warm-up before each measured workload: small reads, checked, not timed.
pub(crate) async fn warm_up(conn: &Conn, fixture: &Fixture, count: usize) -> Result<(), Error> {
    let picks = picks(count, 0x7761_726d);
    reads(conn, fixture, &picks, None, &mut Measured::default()).await
}

/// `count` indices of small files, from `seed`.
fn picks(count: usize, seed: u64) -> Vec<usize> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|_| rng.usize(..fixture::DIRS * fixture::PER_DIR))
        .collect()
}

/// Runs `workload` on `conn` and checks every answer.
pub(crate) async fn run(
    workload: Workload,
    conn: Arc<Conn>,
    fixture: Arc<Fixture>,
    counts: Counts,
) -> Result<Measured, Error> {
    let mut out = Measured::default();
    let started = Instant::now();
    match workload {
        Workload::ListAll => {
            for _ in 0..counts.listings {
                list_all(&conn, &fixture, &mut out).await?;
            }
        }
        Workload::ReadSmall => {
            let picks = picks(counts.small, 0x736d_616c);
            reads(&conn, &fixture, &picks, None, &mut out).await?;
        }
        Workload::ReadSmallPipelined => pipelined(&conn, &fixture, counts, &mut out).await?,
        Workload::ReadBlob | Workload::ReadBigText => {
            let (path, count) = if workload == Workload::ReadBlob {
                (fixture::BLOB, counts.blob)
            } else {
                (fixture::BIG, counts.big)
            };
            let bytes = fixture.bytes(path).expect("in the fixture");
            let expected = if workload == Workload::ReadBlob {
                Expected::Blob {
                    bytes,
                    base64: fixture.blob_base64(),
                }
            } else {
                Expected::Text(bytes)
            };
            let uri = uri(path);
            for _ in 0..count {
                let answer = out
                    .call(&conn, "resources/read", json!({"uri": uri}))
                    .await?;
                check_read(&answer, &uri, expected)?;
                out.ops += 1;
            }
        }
        Workload::TemplatesList => {
            for _ in 0..counts.templates {
                let answer = out
                    .call(&conn, "resources/templates/list", json!({}))
                    .await?;
                file_template(answer.result()?)?;
                out.ops += 1;
            }
        }
        Workload::ReadViaTemplate => {
            let answer = conn.call("resources/templates/list", json!({})).await?;
            let template = file_template(answer.result()?)?;
            out.notes.push(("template", json!(template)));
            let picks = picks(counts.via_template, 0x7465_6d70);
            let started = Instant::now();
            reads(&conn, &fixture, &picks, Some(&template), &mut out).await?;
            out.seconds = started.elapsed().as_secs_f64();
            return Ok(out);
        }
    }
    out.seconds = started.elapsed().as_secs_f64();
    Ok(out)
}

/// A `resources/list` result, as far as it is checked.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Page<'a> {
    #[serde(borrow)]
    resources: Array<Object<Listed<'a>>>,
    #[serde(borrow, rename = "nextCursor")]
    next_cursor: Str<'a>,
}

/// A listed resource, as far as it is checked.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Listed<'a> {
    #[serde(borrow)]
    uri: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    size: U64,
}

/// What a listing has seen so far: the fixture's own copy of each path listed (a URI is
/// `file:///` and a path, so a URI seen is its path seen), and how many came with a size.
struct Listing<'f> {
    seen: HashSet<&'f str>,
    sizes: usize,
}

/// Checks one page of a listing (its result): every resource a file of the fixture, with
/// a name, its size right if given, not listed before. Its next cursor, if any.
fn check_page<'p, 'f>(
    page: Page<'p>,
    fixture: &'f Fixture,
    listing: &mut Listing<'f>,
) -> Result<Option<Cow<'p, str>>, Error> {
    let resources = page
        .resources
        .0
        .ok_or("resources/list: no resources array")?;
    for resource in resources {
        let resource = resource.0.unwrap_or_default();
        let uri = resource.uri.0.ok_or("a listed resource without a uri")?;
        let (path, bytes) = uri
            .strip_prefix("file:///")
            .ok_or_else(|| format!("listed {uri}: not file:///"))
            .and_then(|path| {
                fixture
                    .entry(path)
                    .ok_or_else(|| format!("listed {uri}: not in the fixture"))
            })?;
        if resource.name.0.is_none_or(|n| n.is_empty()) {
            return Err(format!("listed {uri} without a name"));
        }
        if let Some(size) = resource.size.0 {
            if size != bytes.len() as u64 {
                return Err(format!(
                    "listed {uri} with size {size}, not {}",
                    bytes.len()
                ));
            }
            listing.sizes += 1;
        }
        if !listing.seen.insert(path) {
            return Err(format!("listed {uri} twice in one listing"));
        }
    }
    Ok(page.next_cursor.0)
}

/// One complete listing, following cursors; every page timed.
async fn list_all(conn: &Conn, fixture: &Fixture, out: &mut Measured) -> Result<(), Error> {
    let mut listing = Listing {
        seen: HashSet::with_capacity(fixture.len()),
        sizes: 0,
    };
    let mut cursors: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0usize;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let answer = out.call(conn, "resources/list", params).await?;
        pages += 1;
        match check_page(answer.result()?, fixture, &mut listing)? {
            Some(next) => {
                if !cursors.insert(next.clone().into_owned()) || pages > fixture.len() {
                    return Err(format!("the cursor {next:?} came back: a loop"));
                }
                cursor = Some(next.into_owned());
            }
            None => break,
        }
    }
    let seen = listing.seen.len();
    if seen != fixture.len() {
        return Err(format!(
            "a listing held {seen} of the {} files",
            fixture.len()
        ));
    }
    out.ops += 1;
    out.notes
        .retain(|(k, _)| *k != "pages_per_listing" && *k != "sizes_listed");
    out.notes.push(("pages_per_listing", json!(pages)));
    out.notes
        .push(("sizes_listed", json!(listing.sizes == seen)));
    Ok(())
}

/// Small reads, `in_flight` at a time over the one connection.
async fn pipelined(
    conn: &Arc<Conn>,
    fixture: &Arc<Fixture>,
    counts: Counts,
    out: &mut Measured,
) -> Result<(), Error> {
    let picks = Arc::new(picks(counts.pipelined, 0x7069_7065));
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..counts.in_flight {
        let (conn, fixture, picks, next) =
            (conn.clone(), fixture.clone(), picks.clone(), next.clone());
        workers.spawn(async move {
            let mut mine = Measured::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = picks.get(i) else { break };
                reads(&conn, &fixture, &[index], None, &mut mine).await?;
            }
            Ok::<_, Error>(mine)
        });
    }
    while let Some(done) = workers.join_next().await {
        let mine = done.map_err(|e| format!("a reader failed: {e}"))??;
        out.ops += mine.ops;
        out.requests += mine.requests;
        out.bytes += mine.bytes;
        out.latencies_us.extend(mine.latencies_us);
    }
    out.notes.push(("in_flight", json!(counts.in_flight)));
    Ok(())
}

/// What a read must bring back: a file's bytes as `text`, or as a `blob` (with their
/// base64, the one string that decodes to them).
#[derive(Clone, Copy)]
pub(crate) enum Expected<'a> {
    Text(&'a [u8]),
    Blob { bytes: &'a [u8], base64: &'a str },
}

/// A `resources/read` result, as far as it is checked, its contents' text read as `T`.
#[derive(Deserialize, Default)]
#[serde(bound(deserialize = "T: Deserialize<'de> + Default"), default)]
struct Read<'a, T> {
    #[serde(borrow)]
    contents: Array<Object<Content<'a, T>>>,
}

/// A content, as far as it is checked: its text (as `Str`, or as `json::Decoded` bytes in
/// a compact message) or blob, borrowed from the message where it has no escapes (else
/// decoded once, into its own buffer).
#[derive(Deserialize, Default)]
#[serde(bound(deserialize = "T: Deserialize<'de> + Default"), default)]
struct Content<'a, T> {
    #[serde(borrow)]
    uri: Raw<'a>,
    text: T,
    #[serde(borrow)]
    blob: Str<'a>,
}

/// Checks a `resources/read` answer: exactly one content, the URI asked, the file's exact
/// bytes, as `blob` (base64) or as `text`, as `expected` says.
fn check_read(answer: &Answer, uri: &str, expected: Expected<'_>) -> Result<(), Error> {
    // The text's bytes as they decode, neither copied nor checked for UTF-8 apart: equal
    // to the file's, they are its text (`json::Decoded`). A result this view cannot read
    // (a text that is not a string) is read again as below, for the error a `Value` would
    // have given.
    if let Expected::Text(bytes) = expected
        && answer.is_compact()
        && let Ok(read) = answer.result::<Read<'_, Decoded<'_>>>()
    {
        return check_text(&read, uri, bytes, |t| t.0.as_deref());
    }
    match expected {
        Expected::Text(bytes) => {
            let read: Read<'_, Str<'_>> = answer.result()?;
            check_text(&read, uri, bytes, |t| t.0.as_deref().map(str::as_bytes))?;
        }
        Expected::Blob { bytes, base64 } => {
            let read: Read<'_, IgnoredAny> = answer.result()?;
            let content = the_content(&read, uri)?;
            let encoded = content
                .blob
                .0
                .as_deref()
                .ok_or_else(|| format!("read {uri}: no blob"))?;
            // The same string decodes to the same bytes; any other is decoded to be sure.
            if encoded != base64 {
                let got = base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map_err(|e| format!("read {uri}: a blob that is not base64: {e}"))?;
                if got != bytes {
                    return Err(mismatch(uri, got.len(), bytes));
                }
            }
        }
    }
    Ok(())
}

/// Checks that the one content of `read` names `uri` and has a text (its bytes, by
/// `text`) that is `bytes`.
fn check_text<T: Default>(
    read: &Read<'_, T>,
    uri: &str,
    bytes: &[u8],
    text: impl Fn(&T) -> Option<&[u8]>,
) -> Result<(), Error> {
    let content = the_content(read, uri)?;
    let text = text(&content.text).ok_or_else(|| format!("read {uri}: no text"))?;
    if text != bytes {
        return Err(mismatch(uri, text.len(), bytes));
    }
    Ok(())
}

/// The one content of a read, naming `uri` (a content that is not an object names none).
fn the_content<'r, 'a, T: Default>(
    read: &'r Read<'a, T>,
    uri: &str,
) -> Result<&'r Content<'a, T>, Error> {
    let contents = read
        .contents
        .0
        .as_ref()
        .ok_or_else(|| format!("read {uri}: no contents"))?;
    let [content] = contents.as_slice() else {
        return Err(format!("read {uri}: {} contents, not one", contents.len()));
    };
    let Some(content) = content.0.as_ref() else {
        return Err(format!("read {uri}: the content names null"));
    };
    let named = content.uri.0;
    if named.and_then(json::as_str).as_deref() != Some(uri) {
        let named = named.map_or("null", |n| n.get());
        return Err(format!("read {uri}: the content names {named}"));
    }
    Ok(content)
}

/// The error of a read whose `got` bytes are not `expected`.
fn mismatch(uri: &str, got: usize, expected: &[u8]) -> Error {
    format!(
        "read {uri}: {got} bytes that are not the file's {}",
        expected.len()
    )
}

/// A `resources/templates/list` result, as far as it is checked.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Templates<'a> {
    #[serde(borrow, rename = "resourceTemplates")]
    templates: Array<Object<Template<'a>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Template<'a> {
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow, rename = "uriTemplate")]
    uri_template: Str<'a>,
}

/// The `file:///` template of a `resources/templates/list` result, with a name.
fn file_template(templates: Templates<'_>) -> Result<String, Error> {
    templates
        .templates
        .0
        .into_iter()
        .flatten()
        .filter_map(|t| t.0)
        .filter(|t| t.name.0.as_ref().is_some_and(|n| !n.is_empty()))
        .filter_map(|t| t.uri_template.0)
        .find(|t| t.starts_with("file:///") && t.contains('{'))
        .map(|t| t.into_owned())
        .ok_or_else(|| "no named file:/// template".to_owned())
}

/// Expands a template of one variable (`{var}` or `{+var}`, RFC 6570 levels 1 and 2) with
/// `value`: `+` keeps reserved characters, the simple form encodes all but unreserved.
pub(crate) fn expand(template: &str, value: &str) -> Result<String, Error> {
    let open = template
        .find('{')
        .ok_or("a template without an expression")?;
    let close = open + template[open..].find('}').ok_or("an unclosed expression")?;
    if template[close + 1..].contains('{') {
        return Err(format!("{template}: more than one expression"));
    }
    let expression = &template[open + 1..close];
    let reserved = expression.starts_with('+');
    let name = expression.trim_start_matches('+');
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "{template}: an expression this client does not expand"
        ));
    }
    let mut out = String::from(&template[..open]);
    for byte in value.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || b"-._~".contains(&byte)
            || (reserved && b":/?#[]@!$&'()*+,;=".contains(&byte));
        if keep {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out.push_str(&template[close + 1..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_reserved_and_simple_forms() {
        assert_eq!(
            expand("file:///{+path}", "small/d01/f0100.txt").unwrap(),
            "file:///small/d01/f0100.txt"
        );
        assert_eq!(
            expand("file:///{path}", "a b/c").unwrap(),
            "file:///a%20b%2Fc"
        );
        assert_eq!(
            expand("file:///{+path}", "a b/é").unwrap(),
            "file:///a%20b/%C3%A9"
        );
        assert_eq!(expand("x://{+p}/raw", "q").unwrap(), "x://q/raw");
        assert!(expand("file:///{#path}", "a").is_err());
        assert!(expand("file:///{a}/{b}", "a").is_err());
    }

    /// `check_read` of a result written as JSON, in an answer (compact or not, as written).
    fn check(result: &str, uri: &str, expected: Expected<'_>) -> Result<(), Error> {
        let message = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
        let answer = crate::conn::answer_in(bytes::Bytes::from(message), 1).unwrap();
        check_read(&answer, uri, expected)
    }

    #[test]
    fn a_read_is_checked_byte_for_byte() {
        let he = "hé".as_bytes();
        let text = r#"{"contents": [{"uri": "file:///a", "text": "hé"}]}"#;
        assert!(check(text, "file:///a", Expected::Text(he)).is_ok());
        assert!(check(text, "file:///a", Expected::Text(b"he")).is_err());
        assert!(check(text, "file:///a", Expected::Text(b"h")).is_err());
        assert!(check(text, "file:///b", Expected::Text(he)).is_err());
        let as_blob = Expected::Blob {
            bytes: he,
            base64: "aMOp",
        };
        assert!(check(text, "file:///a", as_blob).is_err());
        // Escapes anywhere decode to the same text.
        let escaped = r#"{"contents": [{"uri": "file:\/\/\/a", "text": "h\u00e9", "x": [{}]}]}"#;
        assert!(check(escaped, "file:///a", Expected::Text(he)).is_ok());
        assert!(check(escaped, "file:///a", Expected::Text("hè".as_bytes())).is_err());
        let error = check(escaped, "file:///a", Expected::Text(b"h\\u00e9")).unwrap_err();
        assert!(
            error.contains("3 bytes that are not the file's 7"),
            "{error}"
        );

        let blob = Expected::Blob {
            bytes: &[0, 1, 2],
            base64: "AAEC",
        };
        let read = |json: &str| check(json, "file:///b", blob);
        assert!(read(r#"{"contents": [{"uri": "file:///b", "blob": "AAEC"}]}"#).is_ok());
        assert!(read(r#"{"contents": [{"uri": "file:///b", "blob": "AAED"}]}"#).is_err());
        assert!(read(r#"{"contents": [{"uri": "file:///b", "blob": "AAE"}]}"#).is_err());
        assert!(read(r#"{"contents": [{"uri": "file:///b", "blob": "AAEC "}]}"#).is_err());
        assert!(read(r#"{"contents": [{"uri": "file:///b", "text": "AAEC"}]}"#).is_err());
        assert!(read(r#"{"contents": [{"uri": "file:///b", "blob": "\u0041AEC"}]}"#).is_ok());
        let a = Expected::Text(b"");
        let two =
            r#"{"contents": [{"uri": "file:///a", "text": ""}, {"uri": "file:///a", "text": ""}]}"#;
        assert!(check(two, "file:///a", a).is_err());
        for wrong in [
            r#"{"contents": [{"uri": "file:///a"}]}"#,
            r#"{"contents": [{"uri": "file:///a", "text": null}]}"#,
            r#"{"contents": [{"uri": "file:///a", "text": 0}]}"#,
            r#"{"contents": [["file:///a", ""]]}"#,
            r#"{"contents": []}"#,
            r#"{"contents": {"uri": "file:///a", "text": ""}}"#,
            r#"[[{"uri": "file:///a", "text": ""}]]"#,
            r#"null"#,
        ] {
            assert!(check(wrong, "file:///a", a).is_err(), "{wrong}");
        }
        // A text that is not a string is named as before, whichever way it was read.
        for not_text in [
            r#"{"contents": [{"uri": "file:///a", "text": null}]}"#,
            "{\"contents\": [{\"uri\": \"file:///a\",\n\"text\": 0}]}",
        ] {
            let error = check(not_text, "file:///a", a).unwrap_err();
            assert_eq!(error, "read file:///a: no text");
        }
        assert!(
            check(
                r#"{"contents": [{"uri": "file:///a", "text": ""}]}"#,
                "file:///a",
                a
            )
            .is_ok()
        );
    }

    #[test]
    fn a_message_with_control_characters_is_read_the_strict_way() {
        let he = Expected::Text("h\u{e9}\t".as_bytes());
        // Whitespace between tokens: not compact, and right.
        let spaced = "{\"contents\":\t[{\"uri\": \"file:///a\",\n\"text\": \"h\u{e9}\\t\"}]}";
        assert!(check(spaced, "file:///a", he).is_ok());
        // A raw tab in the text decodes to the same bytes, but is not JSON.
        let raw_tab = "{\"contents\": [{\"uri\": \"file:///a\", \"text\": \"h\u{e9}\t\"}]}";
        assert!(check(raw_tab, "file:///a", he).is_err());
    }

    /// One or two bytes of `message` from `start` on replaced by, or with one of, `bytes`
    /// inserted, or removed.
    fn damage(rng: &mut fastrand::Rng, message: &mut Vec<u8>, start: usize, bytes: &[u8]) {
        for _ in 0..rng.usize(1..=2) {
            let at = rng.usize(start..message.len());
            match rng.u8(..3) {
                0 => message[at] = bytes[rng.usize(..bytes.len())],
                1 => {
                    message.remove(at);
                }
                _ => message.insert(at, bytes[rng.usize(..bytes.len())]),
            }
        }
    }

    /// The check as it was made on a `serde_json::Value` of the whole message.
    fn check_on_value(message: &[u8], uri: &str, expected: &[u8]) -> bool {
        let Ok(message) = serde_json::from_slice::<Value>(message) else {
            return false;
        };
        let result = &message["result"];
        let Some([content]) = result["contents"].as_array().map(Vec::as_slice) else {
            return false;
        };
        message["id"].as_u64() == Some(1)
            && message.get("error").is_none()
            && content["uri"].as_str() == Some(uri)
            && content["text"].as_str().map(str::as_bytes) == Some(expected)
    }

    #[test]
    fn a_damaged_read_fails_as_it_failed_on_a_value() {
        let text = "tab\there \"quoted\" back\\slash caf\u{e9} \u{6771}\u{4eac} \u{1f600}\n";
        let escaped = serde_json::to_string(text).unwrap();
        let good = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"contents":[{{"uri":"file:///a","text":{escaped}}}]}}}}"#
        );
        let start = good.find("\"result\"").unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        let bytes: &[u8] = b"\"\\/ \t\n\x01\x7fa\xc3\xa9\xff{}[],:0u";
        let mut damaged = 0;
        for _ in 0..20_000 {
            let mut message = good.clone().into_bytes();
            damage(&mut rng, &mut message, start, bytes);
            let was = check_on_value(&message, "file:///a", text.as_bytes());
            let answer = crate::conn::answer_in(bytes::Bytes::from(message.clone()), 1);
            let is = answer
                .and_then(|a| check_read(&a, "file:///a", Expected::Text(text.as_bytes())))
                .is_ok();
            assert_eq!(is, was, "{}", String::from_utf8_lossy(&message));
            // The same in an event stream, matched by id as a line on stdio is.
            if !message.contains(&b'\n') && !message.contains(&b'\r') {
                let mut event = b"event: message\ndata: ".to_vec();
                event.extend_from_slice(&message);
                event.extend_from_slice(b"\n\n");
                let answer = crate::conn::answer_in(bytes::Bytes::from(event), 1);
                let is = answer
                    .and_then(|a| check_read(&a, "file:///a", Expected::Text(text.as_bytes())))
                    .is_ok();
                assert_eq!(is, was, "{}", String::from_utf8_lossy(&message));
            }
            damaged += usize::from(!was);
        }
        assert!(damaged > 10_000, "{damaged}");
        let answer = crate::conn::answer_in(bytes::Bytes::from(good), 1).unwrap();
        assert!(check_read(&answer, "file:///a", Expected::Text(text.as_bytes())).is_ok());
    }

    /// A page checked as it was on a `serde_json::Value` of the whole message: whether it
    /// passes, and its next cursor.
    fn page_on_value(message: &[u8], fixture: &Fixture) -> (bool, Option<String>) {
        let Ok(message) = serde_json::from_slice::<Value>(message) else {
            return (false, None);
        };
        if message["id"].as_u64() != Some(1) || message.get("error").is_some() {
            return (false, None);
        }
        let result = &message["result"];
        let Some(resources) = result["resources"].as_array() else {
            return (false, None);
        };
        let mut seen = HashSet::new();
        for resource in resources {
            let Some(uri) = resource["uri"].as_str() else {
                return (false, None);
            };
            let Some(bytes) = uri.strip_prefix("file:///").and_then(|p| fixture.bytes(p)) else {
                return (false, None);
            };
            if resource["name"].as_str().is_none_or(str::is_empty)
                || resource
                    .get("size")
                    .and_then(Value::as_u64)
                    .is_some_and(|size| size != bytes.len() as u64)
                || !seen.insert(uri.to_owned())
            {
                return (false, None);
            }
        }
        let next = result.get("nextCursor").and_then(Value::as_str);
        (true, next.map(str::to_owned))
    }

    #[test]
    fn a_damaged_page_fails_as_it_failed_on_a_value() {
        let files = [("a", 3), ("b/c", 10), ("d\"e", 0), ("f\u{e9}", 1)];
        let fixture = Fixture::of(files.map(|(p, n)| (p.to_owned(), vec![b'x'; n])).into());
        let good = r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[
            {"uri":"file:///a","name":"a","size":3,"mimeType":"text/plain"},
            {"uri":"file:///b\/c","name":"c","size":10.0},
            {"uri":"file:///d\"e","name":"\u0065","size":"0"},
            {"uri":"file:///f\u00e9","name":"f","size":1,"annotations":{"x":[1]}}
            ],"nextCursor":"n\u0031"}}"#
            .replace("\n", "");
        let start = good.find("\"result\"").unwrap();
        let mut rng = fastrand::Rng::with_seed(11);
        let bytes: &[u8] = b"\"\\/ \t\x01a\xc3\xa9\xff{}[],:0123.-eu";
        let (mut damaged, mut unread) = (0, 0);
        for round in 0..20_000 {
            let mut message = good.clone().into_bytes();
            if round > 0 {
                damage(&mut rng, &mut message, start, bytes);
            }
            let (was, next_was) = page_on_value(&message, &fixture);
            let answer = crate::conn::answer_in(bytes::Bytes::from(message.clone()), 1).unwrap();
            let mut listing = Listing {
                seen: HashSet::new(),
                sizes: 0,
            };
            let is = answer
                .result()
                .and_then(|page| check_page(page, &fixture, &mut listing));
            let shown = String::from_utf8_lossy(&message);
            // Skipped values are not read, so not checked for UTF-8 (a `Value` of the whole
            // message was): the one difference allowed, where only such bytes made it fail.
            let unread_bytes = || {
                std::str::from_utf8(&message).is_err()
                    && page_on_value(shown.as_bytes(), &fixture).0
            };
            if is.is_ok() && !was && unread_bytes() {
                unread += 1;
                continue;
            }
            assert_eq!(is.is_ok(), was, "{shown}: {is:?}");
            if let Ok(next) = is {
                assert_eq!(next.map(Cow::into_owned), next_was, "{shown}");
            }
            if round == 0 {
                assert!(was && listing.sizes == 2 && listing.seen.len() == 4);
            }
            damaged += usize::from(!was);
        }
        assert!(damaged > 10_000 && unread < 200, "{damaged} {unread}");
    }

    #[test]
    fn the_file_template_must_have_a_name() {
        let templates = |json: &str| file_template(json::object(json).unwrap());
        let unnamed = r#"{"resourceTemplates": [{"uriTemplate": "file:///{+path}"}]}"#;
        assert!(templates(unnamed).is_err());
        let named = r#"{"resourceTemplates": [
            {"uriTemplate": "db:///{t}", "name": "db"}, 7, ["file:///{x}", "n"],
            {"uriTemplate": "file:///{+path}", "name": "file"}]}"#;
        assert_eq!(templates(named).unwrap(), "file:///{+path}");
        assert!(templates(r#"{"resourceTemplates": {}}"#).is_err());
        assert!(templates("[]").is_err());
    }

    #[test]
    fn every_server_gets_the_same_files_to_read() {
        assert_eq!(picks(100, 1), picks(100, 1));
        assert_ne!(picks(100, 1), picks(100, 2));
    }
}
