//! The Notion resources of the framework guide (its PHP `#[McpResource]` example),
//! written with `#[resources]`, over a fake Notion client: the one copy that both Notion
//! examples serve, `crates/rsrc/examples/notion.rs` on rsrc's own server and
//! `crates/rsrc-rmcp/examples/rmcp-notion.rs` inside an rmcp server. See
//! `docs/writing-resources.md`.
//!
//! The fake client serves one call at a time, each taking 100 ms
//! (`NOTION_FAKE_LATENCY_MS` overrides), so the cache and its single flight show from
//! outside; pages can be added (`FakeNotion::create_page`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

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

/// An in-process stand-in for a Notion API client.
pub struct FakeNotion {
    latency: Duration,
    one_at_a_time: tokio::sync::Mutex<()>,
    calls: AtomicUsize,
    pages: Mutex<Vec<Stored>>,
}

/// A page as the fake backend keeps it.
struct Stored {
    id: String,
    title: String,
    blocks: Vec<String>,
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
    id: String,
    title: String,
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

    /// A client whose calls take `latency`, holding two pages: abc123 "Project Roadmap"
    /// and def456 "Launch Checklist".
    pub fn with_latency(latency: Duration) -> Self {
        let page = |id: &str, title: &str, blocks: &[&str]| Stored {
            id: id.to_owned(),
            title: title.to_owned(),
            blocks: blocks.iter().map(|b| (*b).to_owned()).collect(),
        };
        FakeNotion {
            latency,
            one_at_a_time: tokio::sync::Mutex::new(()),
            calls: AtomicUsize::new(0),
            pages: Mutex::new(vec![
                page(
                    "abc123",
                    "Project Roadmap",
                    &["# Q4", "- Ship the resources macro"],
                ),
                page(
                    "def456",
                    "Launch Checklist",
                    &["- [x] Docs", "- [ ] Announcement"],
                ),
            ]),
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

    fn pages(&self) -> std::sync::MutexGuard<'_, Vec<Stored>> {
        self.pages.lock().unwrap_or_else(PoisonError::into_inner)
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
        self.pages()
            .iter()
            .map(|p| PageSummary {
                id: p.id.clone(),
                title: p.title.clone(),
            })
            .collect()
    }

    async fn page(&self, id: &str) -> Option<Page> {
        self.call().await;
        let pages = self.pages();
        let p = pages.iter().find(|p| p.id == id)?;
        Some(Page {
            id: p.id.clone(),
            title: p.title.clone(),
            properties: json!({ "Status": { "select": "In progress" } }),
            content: p.blocks.join("\n"),
            url: format!("https://www.notion.so/{}", p.id),
        })
    }

    /// Adds an empty page titled `title`; returns its id.
    pub async fn create_page(&self, title: &str) -> String {
        self.call().await;
        let mut pages = self.pages();
        let id = format!("new{:03}", pages.len() + 1);
        pages.push(Stored {
            id: id.clone(),
            title: title.to_owned(),
            blocks: Vec::new(),
        });
        id
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
