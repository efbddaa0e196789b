//! What the adapter's tests share: the servers (the Notion resources with the
//! `create_page` tool, a directory, a sample set with every kind of content), each
//! hosted in an rmcp server in memory, and clients for them: rmcp's own, and rsrc's
//! raw-JSON peer.
#![allow(dead_code, unreachable_pub)]

// The Notion resources and fake client, shared with both Notion examples.
#[allow(dead_code, unreachable_pub)]
#[path = "../../../rsrc/examples/shared/notion.rs"]
pub mod notion;

use std::path::Path;
use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ClientCapabilities, ClientConfig, ContentBlock, ErrorData, Implementation,
    ProtocolVersion, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::{ClientLifecycleMode, NotificationContext, RunningService};
use rmcp::{
    ClientHandler, RoleClient, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router,
};
use rsrc::protocol::Resource;
use rsrc::{Representation, ResourceSet, ServerConfig as EngineConfig};
use rsrc_rmcp::{Resources, resource_handler};
use rsrc_testkit::Peer;
use tokio::sync::mpsc;

pub use notion::{FakeNotion, Notion};

/// The cursor key both servers of a comparison seal with.
pub const CURSOR_KEY: [u8; 32] = [7; 32];

/// An rmcp server with one tool and rsrc's resources.
#[derive(Clone)]
pub struct Hosted {
    pub client: Arc<FakeNotion>,
    pub resources: Resources,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct CreatePage {
    /// The title.
    title: String,
}

#[tool_router]
impl Hosted {
    #[tool(description = "Create a page; returns its id")]
    async fn create_page(
        &self,
        Parameters(CreatePage { title }): Parameters<CreatePage>,
    ) -> Result<CallToolResult, ErrorData> {
        let id = self.client.create_page(&title).await;
        self.resources.changes().list_changed();
        let mut result = CallToolResult::success(vec![ContentBlock::text(id.clone())]);
        result.structured_content = Some(serde_json::json!({ "id": id }));
        Ok(result)
    }
}

#[tool_handler]
#[resource_handler]
impl ServerHandler for Hosted {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hosted", "1.0"))
    }
}

/// A sample of every kind of content: text, a blob, a document with two formats, a
/// collection and its children.
pub fn sample_set() -> ResourceSet {
    ResourceSet::new()
        .with_text(
            Resource::new("sample:///README.md", "README.md")
                .with_title("Read me")
                .with_mime_type("text/markdown")
                .with_last_modified("2025-01-12T15:00:58Z"),
            "# Sample\n",
        )
        .with_blob(
            Resource::new("sample:///logo.png", "logo.png").with_mime_type("image/png"),
            b"\x89PNG\r\n\x1a\n\x00".to_vec(),
        )
        .with_representations(
            Resource::new("sample:///report.pdf", "Quarterly Report")
                .with_mime_type("application/pdf"),
            vec![
                Representation::blob(b"%PDF-1.4 fake".to_vec()),
                Representation::text("Extracted text").with_mime_type("text/plain"),
            ],
        )
        .with_collection(Resource::new("sample:///guide", "guide"))
        .with_text(Resource::new("sample:///guide/a.md", "a.md"), "A")
        .with_text(Resource::new("sample:///guide/b.md", "b.md"), "BB")
}

/// The engine behind the tests: the Notion resources (announced by the tool) and the
/// sample set, pages of `page_size`, cursors sealed with [`CURSOR_KEY`].
pub fn engine(client: &Arc<FakeNotion>, page_size: usize) -> rsrc::Server {
    engine_with(client, page_size, true)
}

/// [`engine`], serving rsrc's SEP-2093 extension or exactly the standard shapes.
pub fn engine_with(client: &Arc<FakeNotion>, page_size: usize, metadata: bool) -> rsrc::Server {
    rsrc::Server::builder("engine", "1.0")
        .mount_announced(
            "notion:",
            Notion {
                client: Arc::clone(client),
            },
        )
        .mount("sample:", sample_set())
        .config(EngineConfig {
            page_size,
            ..EngineConfig::default()
        })
        .cursor_key(CURSOR_KEY)
        .resource_metadata(metadata)
        .build()
        .expect("the engine builds")
}

/// The hosted server over the Notion client `client`.
pub fn hosted(client: &Arc<FakeNotion>, page_size: usize) -> Hosted {
    hosted_with(client, page_size, true)
}

/// [`hosted`] over [`engine_with`].
pub fn hosted_with(client: &Arc<FakeNotion>, page_size: usize, metadata: bool) -> Hosted {
    Hosted {
        client: Arc::clone(client),
        resources: Resources::new(engine_with(client, page_size, metadata)),
    }
}

/// A directory served by the filesystem provider, inside an rmcp server.
#[derive(Clone)]
pub struct FsServer {
    pub resources: Resources,
}

#[resource_handler]
impl ServerHandler for FsServer {}

pub fn fs_server(dir: &Path) -> FsServer {
    use rsrc_providers::fs::{FsConfig, FsProvider, PREFIX};
    let provider = FsProvider::new(vec![("root".into(), dir.to_owned())], FsConfig::default())
        .expect("the directory opens");
    let server = rsrc::Server::builder("fs", "1.0")
        .mount(PREFIX, provider)
        .config(EngineConfig {
            page_size: 2,
            ..EngineConfig::default()
        })
        .build()
        .expect("the engine builds");
    FsServer {
        resources: Resources::new(server),
    }
}

/// Serves `handler` on one end of an in-memory stream; returns the other end.
pub fn serve_in_memory<H: ServerHandler>(handler: H) -> tokio::io::DuplexStream {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client_end
}

/// A raw-JSON peer (every message validated against the revision's schema) talking to
/// `handler`, begun in revision `v`.
pub async fn peer<H: ServerHandler>(handler: H, v: rsrc::protocol::ProtocolVersion) -> Peer {
    let (read, write) = tokio::io::split(serve_in_memory(handler));
    let mut peer = Peer::new(read, write);
    peer.begin(v).await;
    peer
}

/// What rmcp's client tells about resources: `updated <uri>` and `list_changed`.
#[derive(Clone)]
pub struct Recorder(mpsc::UnboundedSender<String>);

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(format!("updated {}", params.uri));
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send("list_changed".into());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("rmcp-test-client", "1.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

/// The two eras rmcp's client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize`, 2025-11-25.
    Legacy,
    /// `server/discover`, 2026-07-28.
    Modern,
}

pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// rmcp's client connected to `handler` in `era`, and what it hears.
pub async fn rmcp_client<H: ServerHandler>(
    handler: H,
    era: Era,
) -> (
    RunningService<RoleClient, Recorder>,
    mpsc::UnboundedReceiver<String>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let lifecycle = match era {
        Era::Legacy => ClientLifecycleMode::Initialize,
        Era::Modern => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let client = rmcp::service::serve_client_with_lifecycle(
        Recorder(tx),
        serve_in_memory(handler),
        lifecycle,
    )
    .await
    .expect("the client connects");
    (client, rx)
}
