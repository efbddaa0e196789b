//! The page's routes: the embedded page, a small JSON API over the servers, and the event
//! stream (SSE) of their changes.
//!
//! Invariants:
//! - Every route sits behind the guard (`guard.rs`); the API answers JSON, and a failure
//!   is `{"error": {"kind", "message", "code"?, "data"?}}`: the server's own code and
//!   message when it answered with an error (502), 503 when it is not connected, 504 when
//!   it did not answer in time, 400 for a bad request from the page.
//! - Raw contents (`/api/content/…`) are only ever sent as `text/plain` or
//!   `application/octet-stream` attachments under a sandboxing policy: whatever a server
//!   calls them, they never become a document of this origin.
//! - What is kept for the page is bounded: the last [`READS_KEPT`] reads, at most
//!   [`READS_BYTES`] in all; a search lists at most [`SEARCH_PAGES`] pages per server and
//!   returns at most [`SEARCH_MAX`] items; a bundle holds at most [`BUNDLE_ITEMS`] resources
//!   and [`BUNDLE_BYTES`].

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use http::{HeaderValue, StatusCode, header};
use rsrc::client::{Client, ClientError, anywhere};
use rsrc::protocol::resources::{ListFilter, ReadResourceResult};
use rsrc::protocol::{Body as Contents, Resource, ResourceTemplate};
use serde::Deserialize;
use serde_json::{Value, json};

use super::guard::{CONTENT_CSP, Guard};
use super::render::{self, View};
use super::servers::{Servers, Slot, Unavailable, lagged};
use super::{assets, bundle};

/// The largest answer taken from a server (a larger one is refused, not buffered).
pub(super) const MAX_READ: usize = 64 * 1024 * 1024;
/// Reads whose contents stay available to the page.
const READS_KEPT: usize = 8;
/// Bytes of contents kept for the page, in all.
const READS_BYTES: usize = 256 * 1024 * 1024;
/// Largest text sent inside a read's JSON; a longer one is fetched from its `href`.
const INLINE_TEXT: usize = 256 * 1024;
/// Pages a search lists per server.
const SEARCH_PAGES: usize = 20;
/// Items a search returns per server.
const SEARCH_MAX: usize = 500;
/// Longest search text.
const QUERY_MAX: usize = 200;
/// Resources in one bundle.
pub(super) const BUNDLE_ITEMS: usize = 500;
/// Bytes of contents in one bundle.
pub(super) const BUNDLE_BYTES: usize = 64 * 1024 * 1024;

/// What every route shares.
#[derive(Clone)]
pub(super) struct App {
    pub(super) servers: Arc<Servers>,
    reads: Arc<Reads>,
}

/// The last reads, whose contents the page fetches by `/api/content/{read}/{index}`.
#[derive(Default)]
struct Reads {
    next: AtomicU64,
    kept: Mutex<VecDeque<(u64, Arc<ReadResourceResult>)>>,
}

impl Reads {
    fn keep(&self, read: Arc<ReadResourceResult>) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.push_back((id, read));
        let size = |r: &ReadResourceResult| r.contents.iter().map(|c| c.body.len()).sum::<usize>();
        while kept.len() > READS_KEPT
            || (kept.len() > 1 && kept.iter().map(|(_, r)| size(r)).sum::<usize>() > READS_BYTES)
        {
            kept.pop_front();
        }
        id
    }

    fn get(&self, id: u64) -> Option<Arc<ReadResourceResult>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|(i, _)| *i == id)
            .map(|(_, r)| Arc::clone(r))
    }
}

/// A failure, as the page sees it.
#[derive(Debug)]
pub(super) struct ApiError {
    status: StatusCode,
    body: Value,
}

impl ApiError {
    pub(super) fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            body: json!({"kind": "bad_request", "message": message.into()}),
        }
    }

    /// The message, for a list of failures.
    pub(super) fn message(&self) -> String {
        let message = self.body["message"].as_str().unwrap_or("failed");
        match self.body["code"].as_i64() {
            Some(code) => format!("{message} ({code})"),
            None => message.to_owned(),
        }
    }

    fn not_found(message: &str) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            body: json!({"kind": "not_found", "message": message}),
        }
    }
}

impl From<Unavailable> for ApiError {
    fn from(u: Unavailable) -> ApiError {
        let Unavailable::NotConnected(message) = u;
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: json!({"kind": "disconnected", "message": message}),
        }
    }
}

impl From<ClientError> for ApiError {
    fn from(e: ClientError) -> ApiError {
        let (status, body) = match &e {
            ClientError::Rpc(err) => {
                let mut body = json!({"kind": "rpc", "code": err.code.0, "message": err.message});
                if let Some(data) = &err.data {
                    body["data"] = data.clone();
                }
                (StatusCode::BAD_GATEWAY, body)
            }
            ClientError::Timeout => (
                StatusCode::GATEWAY_TIMEOUT,
                json!({"kind": "timeout", "message": e.to_string()}),
            ),
            ClientError::Closed => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"kind": "closed", "message": e.to_string()}),
            ),
            _ => (
                StatusCode::BAD_GATEWAY,
                json!({"kind": "protocol", "message": e.to_string()}),
            ),
        };
        ApiError { status, body }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": self.body}))).into_response()
    }
}

type ApiResult = Result<Json<Value>, ApiError>;

impl App {
    fn slot(&self, id: usize) -> Result<&Arc<Slot>, ApiError> {
        self.servers
            .get(id)
            .ok_or_else(|| ApiError::bad(format!("there is no server {id}")))
    }

    fn client(&self, id: usize) -> Result<(&Arc<Slot>, Client), ApiError> {
        let slot = self.slot(id)?;
        Ok((slot, slot.client()?))
    }
}

/// Runs a call to a server; a failure for want of an answer has the server checked.
pub(super) async fn call<T>(
    slot: &Slot,
    f: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, ApiError> {
    f.await.map_err(|e| {
        slot.failed(&e);
        ApiError::from(e)
    })
}

fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The router, with the guard in front of every route.
pub(super) fn router(servers: Arc<Servers>, guard: Guard) -> axum::Router {
    let app = App {
        servers,
        reads: Arc::new(Reads::default()),
    };
    axum::Router::new()
        .route("/", get(index))
        .route("/assets/{name}", get(asset))
        .route("/api/servers", get(servers_status))
        .route("/api/servers/{id}/retry", post(retry))
        .route("/api/servers/{id}/watch", post(watch))
        .route("/api/list", get(list))
        .route("/api/templates", get(templates))
        .route("/api/expand", post(expand))
        .route("/api/complete", post(complete))
        .route("/api/read", get(read))
        .route("/api/content/{read}/{index}", get(content))
        .route("/api/metadata", get(metadata))
        .route("/api/search", get(search))
        .route("/api/bundle", post(bundle::export))
        .route("/api/events", get(events))
        .with_state(app)
        .layer(axum::middleware::from_fn_with_state(
            guard,
            super::guard::check,
        ))
}

async fn index() -> Response {
    asset(Path("index.html".into())).await
}

async fn asset(Path(name): Path<String>) -> Response {
    match assets::get(&name) {
        Some((content_type, bytes)) => (
            [(header::CONTENT_TYPE, content_type)],
            Bytes::from_static(bytes),
        )
            .into_response(),
        None => ApiError::not_found("no such asset").into_response(),
    }
}

async fn servers_status(State(app): State<App>) -> Json<Value> {
    let all: Vec<Value> = app
        .servers
        .all()
        .iter()
        .map(|s| json_of(&s.status()))
        .collect();
    Json(json!({"servers": all}))
}

async fn retry(State(app): State<App>, Path(id): Path<usize>) -> ApiResult {
    app.slot(id)?.retry();
    Ok(Json(json!({})))
}

#[derive(Deserialize)]
struct WatchBody {
    uris: Vec<String>,
}

async fn watch(
    State(app): State<App>,
    Path(id): Path<usize>,
    Json(body): Json<WatchBody>,
) -> ApiResult {
    if body.uris.len() > 16 {
        return Err(ApiError::bad("at most 16 resources are watched at once"));
    }
    app.slot(id)?.watch(body.uris);
    Ok(Json(json!({})))
}

#[derive(Deserialize)]
struct ListQuery {
    server: usize,
    uri: Option<String>,
    cursor: Option<String>,
}

async fn list(State(app): State<App>, Query(q): Query<ListQuery>) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    let page = call(slot, client.list_resources(q.cursor, q.uri)).await?;
    Ok(Json(json_of(&page)))
}

/// A template's variables, from its text.
fn variables(template: &str) -> Result<Vec<String>, String> {
    let t = rsrc_uri_template::UriTemplate::parse(template).map_err(|e| e.to_string())?;
    let mut out: Vec<String> = Vec::new();
    for v in t.variables() {
        if !out.iter().any(|o| o == v) {
            out.push(v.to_owned());
        }
    }
    Ok(out)
}

fn template_entry(t: &ResourceTemplate) -> Value {
    match variables(&t.uri_template) {
        Ok(vars) => json!({"template": t, "variables": vars}),
        Err(e) => json!({"template": t, "variables": [], "error": e}),
    }
}

#[derive(Deserialize)]
struct TemplatesQuery {
    server: usize,
    cursor: Option<String>,
}

async fn templates(State(app): State<App>, Query(q): Query<TemplatesQuery>) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    let page = call(slot, client.list_templates(q.cursor)).await?;
    let entries: Vec<Value> = page.resource_templates.iter().map(template_entry).collect();
    Ok(Json(
        json!({"templates": entries, "nextCursor": page.next_cursor}),
    ))
}

#[derive(Deserialize)]
struct ExpandBody {
    template: String,
    values: BTreeMap<String, String>,
}

async fn expand(Json(body): Json<ExpandBody>) -> ApiResult {
    let t = rsrc_uri_template::UriTemplate::parse(&body.template)
        .map_err(|e| ApiError::bad(format!("not a URI template: {e}")))?;
    // An empty field is an undefined variable.
    let values: BTreeMap<String, rsrc_uri_template::Value> = body
        .values
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, v.into()))
        .collect();
    let uri = t
        .try_expand(&values)
        .map_err(|e| ApiError::bad(format!("cannot expand the template: {e}")))?;
    Ok(Json(json!({"uri": uri})))
}

#[derive(Deserialize)]
struct CompleteBody {
    server: usize,
    template: String,
    argument: String,
    value: String,
    #[serde(default)]
    context: BTreeMap<String, String>,
}

async fn complete(State(app): State<App>, Json(body): Json<CompleteBody>) -> ApiResult {
    let (slot, client) = app.client(body.server)?;
    let context = body
        .context
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let done = call(
        slot,
        client.complete(&body.template, &body.argument, &body.value, context),
    )
    .await?;
    Ok(Json(json_of(&done)))
}

#[derive(Deserialize)]
struct UriQuery {
    server: usize,
    uri: String,
}

/// One entry of a read, prepared for the page.
fn entry(read: u64, index: usize, c: &rsrc::protocol::ResourceContents) -> Value {
    let (text, bytes) = match &c.body {
        Contents::Text(t) => (Some(t.as_str()), t.as_bytes()),
        Contents::Blob(b) => (None, b.as_ref()),
    };
    let view = render::view(
        c.resource.mime_type.as_deref(),
        &c.resource.uri,
        text.is_some(),
    );
    let mut e = json!({
        "index": index,
        "resource": &c.resource,
        "kind": if text.is_some() { "text" } else { "blob" },
        "size": bytes.len(),
        "view": view,
        "href": format!("/api/content/{read}/{index}"),
    });
    if let Some(text) = text {
        if text.len() <= INLINE_TEXT {
            e["text"] = json!(text);
        }
        match view {
            View::Markdown if text.len() <= render::MARKDOWN_MAX => {
                e["html"] = json!(render::markdown(text));
            }
            View::Csv if text.len() <= render::CSV_MAX => e["table"] = json_of(&render::csv(text)),
            _ => {}
        }
    } else {
        e["hex"] = json!(render::hex(bytes));
    }
    e
}

/// The entry shown first: the first, unless only another one can be shown as text (a PDF
/// and its text).
pub(super) fn first_shown(read: &ReadResourceResult) -> usize {
    let first_is_bytes = read
        .contents
        .first()
        .is_some_and(|c| c.body.as_text().is_none());
    if first_is_bytes
        && let Some(i) = read
            .contents
            .iter()
            .position(|c| c.body.as_text().is_some())
    {
        let first = &read.contents[0].resource;
        if render::view(first.mime_type.as_deref(), &first.uri, false) != View::Image {
            return i;
        }
    }
    0
}

async fn read(State(app): State<App>, Query(q): Query<UriQuery>) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    let result = Arc::new(call(slot, client.read(&q.uri)).await?);
    let id = app.reads.keep(Arc::clone(&result));
    let prepared = Arc::clone(&result);
    // Rendering a large document takes a while: off the runtime's threads.
    let entries = tokio::task::spawn_blocking(move || {
        prepared
            .contents
            .iter()
            .enumerate()
            .map(|(i, c)| entry(id, i, c))
            .collect::<Vec<Value>>()
    })
    .await
    .map_err(|e| ApiError::bad(format!("preparing the contents failed: {e}")))?;
    Ok(Json(json!({
        "uri": q.uri,
        "contents": entries,
        "shown": first_shown(&result),
        "ttlMs": result.ttl_ms,
        "cacheScope": result.cache_scope,
        "resultType": result.result_type,
        "_meta": result.meta,
    })))
}

#[derive(Deserialize)]
struct ContentQuery {
    #[serde(default)]
    download: Option<String>,
}

/// A file name for a download: the URI's last segment, reduced to safe characters.
fn file_name(uri: &str) -> String {
    let path = uri.split_once(':').map_or(uri, |(_, path)| path);
    let last = path
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    let safe: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if safe.trim_matches(['.', '_']).is_empty() {
        "resource".into()
    } else {
        safe
    }
}

async fn content(
    State(app): State<App>,
    Path((read, index)): Path<(u64, usize)>,
    Query(q): Query<ContentQuery>,
) -> Response {
    let Some(entry) = app
        .reads
        .get(read)
        .and_then(|r| r.contents.get(index).cloned())
    else {
        return ApiError::not_found("this content is no longer kept: read the resource again")
            .into_response();
    };
    let (content_type, bytes) = match entry.body {
        Contents::Text(t) => ("text/plain; charset=utf-8", t.into_bytes()),
        Contents::Blob(b) => ("application/octet-stream", b),
    };
    let disposition = if q.download.is_some() {
        format!(
            "attachment; filename=\"{}\"",
            file_name(&entry.resource.uri)
        )
    } else {
        "attachment".to_owned()
    };
    let mut r = Response::new(Body::from(bytes));
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_CSP),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    r
}

async fn metadata(State(app): State<App>, Query(q): Query<UriQuery>) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    match client.metadata(&q.uri).await {
        Ok(resource) => Ok(Json(json!({"resource": resource}))),
        Err(e) if e.is_method_not_found() => Ok(Json(json!({"unsupported": true}))),
        Err(e) => {
            slot.failed(&e);
            Err(e.into())
        }
    }
}

#[derive(Deserialize)]
struct SearchQuery {
    q: String,
}

/// Case-insensitive matching of a search over names, titles, URIs and descriptions.
struct Matcher(globset::GlobMatcher);

impl Matcher {
    fn new(glob: &str) -> Result<Matcher, ApiError> {
        globset::GlobBuilder::new(glob)
            .case_insensitive(true)
            .literal_separator(false)
            .build()
            .map(|g| Matcher(g.compile_matcher()))
            .map_err(|e| ApiError::bad(format!("not a pattern: {e}")))
    }

    fn any<'a>(&self, fields: impl IntoIterator<Item = Option<&'a str>>) -> bool {
        fields.into_iter().flatten().any(|f| self.0.is_match(f))
    }

    fn resource(&self, r: &Resource) -> bool {
        self.any([
            Some(r.name.as_str()),
            r.title.as_deref(),
            Some(r.uri.as_str()),
            r.description.as_deref(),
        ])
    }

    fn template(&self, t: &ResourceTemplate) -> bool {
        self.any([
            Some(t.name.as_str()),
            t.title.as_deref(),
            Some(t.uri_template.as_str()),
            t.description.as_deref(),
        ])
    }
}

/// One server's answer to a search.
async fn search_one(slot: &Slot, glob: &str, matcher: &Matcher) -> Value {
    let client = match slot.client() {
        Ok(c) => c,
        Err(e) => return json!({"server": slot.id, "error": ApiError::from(e).body}),
    };
    let names = rsrc::client::spellings(glob);
    let uris: Vec<String> = names
        .iter()
        .flat_map(|g| rsrc::client::in_any_segment(g))
        .collect();
    let by_server = rsrc::client::expressible(glob)
        && client.filters(&ListFilter {
            name_patterns: Some(names.clone()),
            uri_patterns: Some(uris.clone()),
        });
    // A server that filters is asked for the names and URIs that match (as typed and in
    // the usual cases); any other lists everything, matched here on every field.
    let listed = if by_server {
        call(
            slot,
            client.search_resources(None, &names, &uris, SEARCH_PAGES),
        )
        .await
    } else {
        call(
            slot,
            client.list_matching(None, &ListFilter::default(), SEARCH_PAGES),
        )
        .await
    };
    let listed = match listed {
        Ok(l) => l,
        Err(e) => return json!({"server": slot.id, "error": e.body}),
    };
    let mut truncated = listed.truncated;
    let mut resources: Vec<&Resource> = listed
        .items
        .iter()
        .filter(|r| matcher.resource(r))
        .collect();
    if resources.len() > SEARCH_MAX {
        resources.truncate(SEARCH_MAX);
        truncated = true;
    }
    let templates = match client.list_all_templates(SEARCH_PAGES).await {
        Ok(t) => t
            .items
            .into_iter()
            .filter(|t| matcher.template(t))
            .collect(),
        Err(_) => Vec::new(),
    };
    let templates: Vec<Value> = templates
        .iter()
        .take(SEARCH_MAX)
        .map(template_entry)
        .collect();
    json!({
        "server": slot.id,
        "byServer": by_server,
        "truncated": truncated,
        "resources": resources,
        "templates": templates,
    })
}

async fn search(State(app): State<App>, Query(q): Query<SearchQuery>) -> ApiResult {
    let text = q.q.trim();
    if text.is_empty() || text.chars().count() > QUERY_MAX {
        return Err(ApiError::bad(format!(
            "a search is 1 to {QUERY_MAX} characters"
        )));
    }
    let glob = anywhere(text);
    let matcher = Matcher::new(&glob)?;
    let answers = futures_util::future::join_all(
        app.servers
            .all()
            .iter()
            .map(|slot| search_one(slot, &glob, &matcher)),
    )
    .await;
    Ok(Json(json!({"servers": answers})))
}

async fn events(State(app): State<App>) -> impl IntoResponse {
    // First every server's status, then what happens (subscribed before the statuses are
    // taken, so no change falls between).
    let rx = app.servers.subscribe();
    let first: Vec<super::servers::Event> = app
        .servers
        .all()
        .iter()
        .map(|s| super::servers::Event::Status {
            status: Box::new(s.status()),
        })
        .collect();
    let mut stopping = app.servers.stopping();
    let later = futures_util::stream::unfold(rx, |mut rx| async move {
        use tokio::sync::broadcast::error::RecvError;
        match rx.recv().await {
            Ok(e) => Some((e, rx)),
            Err(RecvError::Lagged(_)) => Some((lagged(), rx)),
            Err(RecvError::Closed) => None,
        }
    });
    let stream = futures_util::stream::iter(first)
        .chain(later)
        .map(|e| Ok::<_, Infallible>(SseEvent::default().data(json_of(&e).to_string())))
        .take_until(async move {
            let _ = stopping.wait_for(|s| *s).await;
        });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_are_reduced_to_safe_characters() {
        assert_eq!(file_name("file:///docs/report.pdf"), "report.pdf");
        assert_eq!(
            file_name("x:///a/\"evil\r\nname\".sh?x=1"),
            "_evil__name_.sh"
        );
        assert_eq!(file_name("x:///"), "resource");
        assert_eq!(file_name("x:///.."), "resource");
    }

    #[test]
    fn template_variables_are_listed_once_in_order() {
        assert_eq!(
            variables("db://{name}/{table}/{key}{?rev,name}").unwrap(),
            ["name", "table", "key", "rev"]
        );
        assert!(variables("x://{bad").is_err());
    }

    #[test]
    fn searches_match_names_titles_uris_and_descriptions_case_insensitively() {
        let m = Matcher::new(&anywhere("GUIDE")).unwrap();
        let r = Resource::new("x:///a", "a").with_description("The user guide");
        assert!(m.resource(&r));
        assert!(!m.resource(&Resource::new("x:///b", "b")));
        let m = Matcher::new(&anywhere("*.md")).unwrap();
        assert!(m.resource(&Resource::new("x:///dir/A.MD", "A")));
    }
}
