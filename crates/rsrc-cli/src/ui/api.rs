//! The page's routes: the embedded page, a small JSON API over the servers, and the event
//! stream (SSE) of their changes. The routes' work is beside this file: `browse.rs`
//! (listing, templates, completion), `reads.rs` (contents), `search.rs`, `bundle.rs` (the
//! basket's export), on what `app.rs` shares.
//!
//! Invariant: every route sits behind the guard (`guard.rs`), and the API answers JSON
//! (a failure as `app.rs` shapes it).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use http::header;
use serde::Deserialize;
use serde_json::{Value, json};

use super::app::{ApiError, ApiResult, App, json_of};
use super::browse::{complete, expand, list, templates};
use super::guard::Guard;
use super::reads::{content, metadata, read};
use super::search::search;
use super::servers::{Servers, lagged};
use super::{assets, bundle};

/// The router, with the guard in front of every route.
pub(super) fn router(servers: Arc<Servers>, guard: Guard) -> axum::Router {
    let app = App::new(servers);
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
