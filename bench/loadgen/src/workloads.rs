//! The workloads: what is asked of a server, how many times, and the check of every
//! answer against the fixture.
//!
//! Invariant: an operation counts only once its answer is checked; the first wrong answer
//! ends the workload with an error naming it, and nothing measured before it is reported.
//! The files read are drawn from one fixed seed, so every server gets the same sequence.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::conn::{Conn, Error};
use crate::fixture::{self, Fixture};

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
        listings: 10,
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
    async fn call(&mut self, conn: &Conn, method: &str, params: Value) -> Result<Value, Error> {
        let started = Instant::now();
        let answer = conn.call(method, params).await?;
        self.latencies_us.push(started.elapsed().as_micros() as u64);
        self.bytes += answer.bytes;
        self.requests += 1;
        Ok(answer.result)
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
        let result = out
            .call(conn, "resources/read", json!({"uri": uri}))
            .await?;
        check_read(
            &result,
            &uri,
            fixture.bytes(&path).expect("a fixture file"),
            false,
        )?;
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
            let (path, count, blob) = if workload == Workload::ReadBlob {
                (fixture::BLOB, counts.blob, true)
            } else {
                (fixture::BIG, counts.big, false)
            };
            let uri = uri(path);
            for _ in 0..count {
                let result = out
                    .call(&conn, "resources/read", json!({"uri": uri}))
                    .await?;
                check_read(
                    &result,
                    &uri,
                    fixture.bytes(path).expect("in the fixture"),
                    blob,
                )?;
                out.ops += 1;
            }
        }
        Workload::TemplatesList => {
            for _ in 0..counts.templates {
                let result = out
                    .call(&conn, "resources/templates/list", json!({}))
                    .await?;
                file_template(&result)?;
                out.ops += 1;
            }
        }
        Workload::ReadViaTemplate => {
            let answer = conn.call("resources/templates/list", json!({})).await?;
            let template = file_template(&answer.result)?;
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

/// One complete listing, following cursors; every page timed.
async fn list_all(conn: &Conn, fixture: &Fixture, out: &mut Measured) -> Result<(), Error> {
    let mut seen: HashSet<String> = HashSet::with_capacity(fixture.len());
    let mut cursors: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0usize;
    let mut sizes = 0usize;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let result = out.call(conn, "resources/list", params).await?;
        pages += 1;
        let resources = result["resources"]
            .as_array()
            .ok_or("resources/list: no resources array")?;
        for resource in resources {
            let uri = resource["uri"]
                .as_str()
                .ok_or("a listed resource without a uri")?;
            let path = uri
                .strip_prefix("file:///")
                .ok_or_else(|| format!("listed {uri}: not file:///"))?;
            let bytes = fixture
                .bytes(path)
                .ok_or_else(|| format!("listed {uri}: not in the fixture"))?;
            if resource["name"].as_str().is_none_or(str::is_empty) {
                return Err(format!("listed {uri} without a name"));
            }
            if let Some(size) = resource.get("size").and_then(Value::as_u64) {
                if size != bytes.len() as u64 {
                    return Err(format!(
                        "listed {uri} with size {size}, not {}",
                        bytes.len()
                    ));
                }
                sizes += 1;
            }
            if !seen.insert(uri.to_owned()) {
                return Err(format!("listed {uri} twice in one listing"));
            }
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) => {
                if !cursors.insert(next.to_owned()) || pages > fixture.len() {
                    return Err(format!("the cursor {next:?} came back: a loop"));
                }
                cursor = Some(next.to_owned());
            }
            None => break,
        }
    }
    if seen.len() != fixture.len() {
        return Err(format!(
            "a listing held {} of the {} files",
            seen.len(),
            fixture.len()
        ));
    }
    out.ops += 1;
    out.notes
        .retain(|(k, _)| *k != "pages_per_listing" && *k != "sizes_listed");
    out.notes.push(("pages_per_listing", json!(pages)));
    out.notes.push(("sizes_listed", json!(sizes == seen.len())));
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

/// Checks a `resources/read` result: exactly one content, the URI asked, the file's exact
/// bytes, as `blob` (base64) when `blob`, else as `text`.
pub(crate) fn check_read(
    result: &Value,
    uri: &str,
    expected: &[u8],
    blob: bool,
) -> Result<(), Error> {
    let contents = result["contents"]
        .as_array()
        .ok_or_else(|| format!("read {uri}: no contents"))?;
    let [content] = contents.as_slice() else {
        return Err(format!("read {uri}: {} contents, not one", contents.len()));
    };
    if content["uri"].as_str() != Some(uri) {
        return Err(format!("read {uri}: the content names {}", content["uri"]));
    }
    let got = if blob {
        let encoded = content["blob"]
            .as_str()
            .ok_or_else(|| format!("read {uri}: no blob"))?;
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| format!("read {uri}: a blob that is not base64: {e}"))?
    } else {
        let text = content["text"]
            .as_str()
            .ok_or_else(|| format!("read {uri}: no text"))?;
        text.as_bytes().to_vec()
    };
    if got != expected {
        return Err(format!(
            "read {uri}: {} bytes that are not the file's {}",
            got.len(),
            expected.len()
        ));
    }
    Ok(())
}

/// The `file:///` template of a `resources/templates/list` result, with a name.
fn file_template(result: &Value) -> Result<String, Error> {
    result["resourceTemplates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["name"].as_str().is_some_and(|n| !n.is_empty()))
        .filter_map(|t| t["uriTemplate"].as_str())
        .find(|t| t.starts_with("file:///") && t.contains('{'))
        .map(str::to_owned)
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

    #[test]
    fn a_read_is_checked_byte_for_byte() {
        let text = json!({"contents": [{"uri": "file:///a", "text": "hé"}]});
        assert!(check_read(&text, "file:///a", "hé".as_bytes(), false).is_ok());
        assert!(check_read(&text, "file:///a", b"he", false).is_err());
        assert!(check_read(&text, "file:///b", "hé".as_bytes(), false).is_err());
        assert!(check_read(&text, "file:///a", "hé".as_bytes(), true).is_err());
        let blob = json!({"contents": [{"uri": "file:///b", "blob": "AAEC"}]});
        assert!(check_read(&blob, "file:///b", &[0, 1, 2], true).is_ok());
        let two = json!({"contents": [{"uri": "file:///a", "text": ""}, {"uri": "file:///a", "text": ""}]});
        assert!(check_read(&two, "file:///a", b"", false).is_err());
    }

    #[test]
    fn the_file_template_must_have_a_name() {
        let unnamed = json!({"resourceTemplates": [{"uriTemplate": "file:///{+path}"}]});
        assert!(file_template(&unnamed).is_err());
        let named = json!({"resourceTemplates": [
            {"uriTemplate": "db:///{t}", "name": "db"},
            {"uriTemplate": "file:///{+path}", "name": "file"}]});
        assert_eq!(file_template(&named).unwrap(), "file:///{+path}");
    }

    #[test]
    fn every_server_gets_the_same_files_to_read() {
        assert_eq!(picks(100, 1), picks(100, 1));
        assert_ne!(picks(100, 1), picks(100, 2));
    }
}
