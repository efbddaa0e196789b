//! The framework guide's Notion resources (its PHP `#[McpResource]` example), written with
//! `#[resources]`: the workspace, any page by id (cached for five minutes, listed,
//! completed) and any database's schema. See `docs/writing-resources.md`.
//!
//! The backend is a fake Notion client in this file: it serves one call at a time, each
//! taking 100 ms (`NOTION_FAKE_LATENCY_MS` overrides), so the cache and its single flight
//! show from outside.
//!
//! ```sh
//! cargo run -p rsrc --example notion                                   # stdio
//! cargo run -p rsrc --example notion --features http -- --http 127.0.0.1:8080
//! ```

use rsrc::declare::{Json, ListItem};
use rsrc::resources;
use serde::Serialize;
use serde_json::{Value, json};

/// The resources, over a Notion client.
pub struct Notion {
    /// The backend.
    pub client: Arc<FakeNotion>,
}

// The resources: everything from here to the fake client is what a user writes.
#[resources]
impl Notion {
    #[resource(uri = "notion://workspace/info", name = "Workspace Information")]
    async fn workspace_info(&self) -> Json<Value> {
        let user = self.client.me().await;
        Json(json!({ "user": user.name, "workspace": user.workspace, "type": user.kind }))
    }

    #[resource(uri = "notion://pages/{pageId}", name = "Notion Page", cache = "300s")]
    async fn page(&self, page_id: String) -> Option<Json<Page>> {
        self.client.page(&page_id).await.map(Json)
    }

    #[list(page)]
    async fn pages(&self) -> Vec<ListItem<PageItem>> {
        let pages = self.client.search().await;
        pages
            .into_iter()
            .map(|p| PageItem { page_id: p.id }.title(p.title))
            .collect()
    }

    #[complete(page, pageId)]
    async fn page_ids(&self) -> Vec<String> {
        let pages = self.client.search().await;
        pages.into_iter().map(|p| p.id).collect()
    }

    #[resource(
        uri = "notion://databases/{databaseId}/schema",
        name = "Database Schema"
    )]
    async fn database_schema(&self, database_id: String) -> Option<Json<Database>> {
        self.client.database(&database_id).await.map(Json)
    }
}

// ---- The fake Notion client: one call at a time, each taking the configured latency. ----

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// An in-process stand-in for a Notion API client.
pub struct FakeNotion {
    latency: Duration,
    one_at_a_time: tokio::sync::Mutex<()>,
    calls: AtomicUsize,
}

/// The signed-in user.
pub struct User {
    name: &'static str,
    workspace: &'static str,
    kind: &'static str,
}

/// A page with its content, as the API returns it.
#[derive(Serialize)]
pub struct Page {
    id: &'static str,
    title: &'static str,
    properties: Value,
    content: String,
    url: String,
}

/// A search hit.
pub struct PageSummary {
    id: String,
    title: String,
}

/// A database and its typed properties.
#[derive(Serialize)]
pub struct Database {
    id: &'static str,
    title: &'static str,
    properties: Vec<Property>,
}

/// One column of a database.
#[derive(Serialize)]
pub struct Property {
    name: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
}

impl FakeNotion {
    /// A client whose calls take `NOTION_FAKE_LATENCY_MS` (default 100 ms).
    pub fn from_env() -> Self {
        let ms = std::env::var("NOTION_FAKE_LATENCY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100);
        FakeNotion::with_latency(Duration::from_millis(ms))
    }

    /// A client whose calls take `latency`.
    pub fn with_latency(latency: Duration) -> Self {
        FakeNotion {
            latency,
            one_at_a_time: tokio::sync::Mutex::new(()),
            calls: AtomicUsize::new(0),
        }
    }

    /// How many calls the backend has served.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    async fn call(&self) {
        let _one = self.one_at_a_time.lock().await;
        self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.latency).await;
    }

    async fn me(&self) -> User {
        self.call().await;
        User {
            name: "Ada Lovelace",
            workspace: "Analytical Engines",
            kind: "person",
        }
    }

    async fn search(&self) -> Vec<PageSummary> {
        self.call().await;
        PAGES
            .iter()
            .map(|(id, title, _)| PageSummary {
                id: id.to_string(),
                title: title.to_string(),
            })
            .collect()
    }

    async fn page(&self, id: &str) -> Option<Page> {
        self.call().await;
        let (id, title, blocks) = PAGES.iter().find(|(i, _, _)| *i == id)?;
        Some(Page {
            id,
            title,
            properties: json!({ "Status": { "select": "In progress" } }),
            content: blocks.join("\n"),
            url: format!("https://www.notion.so/{id}"),
        })
    }

    async fn database(&self, id: &str) -> Option<Database> {
        self.call().await;
        let property = |name, kind| Property { name, kind };
        (id == "db1").then(|| Database {
            id: "db1",
            title: "Tasks",
            properties: vec![
                property("Name", "title"),
                property("Status", "select"),
                property("Due", "date"),
                property("Estimate", "number"),
            ],
        })
    }
}

const PAGES: &[(&str, &str, &[&str])] = &[
    (
        "abc123",
        "Project Roadmap",
        &["# Q4", "- Ship the resources macro"],
    ),
    (
        "def456",
        "Launch Checklist",
        &["- [x] Docs", "- [ ] Announcement"],
    ),
];

/// The server of this example.
pub fn server(client: Arc<FakeNotion>) -> Result<rsrc::Server, rsrc::BuildError> {
    rsrc::Server::builder("notion-example", "1.0")
        .mount("notion:", Notion { client })
        .build()
}

#[allow(dead_code)]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server(Arc::new(FakeNotion::from_env()))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => rsrc::transport::serve_stdio(&server, &Default::default()).await?,
        [flag, addr] if flag == "--http" => serve_http(&server, addr).await?,
        _ => {
            eprintln!("usage: notion [--http ADDR]");
            std::process::exit(2);
        }
    }
    Ok(())
}

#[cfg(feature = "http")]
async fn serve_http(server: &rsrc::Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("serving http://{}/mcp", listener.local_addr()?);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    rsrc::transport::http::serve_http(server, listener, Default::default(), stop).await?;
    Ok(())
}

#[cfg(not(feature = "http"))]
async fn serve_http(_: &rsrc::Server, _: &str) -> Result<(), Box<dyn std::error::Error>> {
    Err(
        "built without HTTP: cargo run -p rsrc --example notion --features http -- --http ADDR"
            .into(),
    )
}
