//! The Notion resources of `crates/rsrc/examples/notion.rs` — the same `#[resources]`
//! type over the same fake client (`crates/rsrc/examples/shared/notion.rs`) — served from
//! an rmcp server beside one rmcp tool, `create_page`, which adds a page and tells the
//! resources so: clients hear `notifications/resources/list_changed` and the new page is
//! listed and readable.
//!
//! ```sh
//! cargo run -p rsrc-rmcp --example rmcp-notion                            # stdio
//! cargo run -p rsrc-rmcp --example rmcp-notion -- --http 127.0.0.1:8080   # Streamable HTTP
//! ```
//!
//! (`rmcp-notion`, not `notion`: rsrc's own example has that name, and two examples of one
//! name overwrite each other in `target/debug/examples/`.)

mod common;

// The resources and the fake client, shared with rsrc's own Notion example.
#[allow(dead_code, unreachable_pub)]
#[path = "../../rsrc/examples/shared/notion.rs"]
mod shared;

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ErrorData, Implementation, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use rsrc_rmcp::{Resources, resource_handler};
use shared::{FakeNotion, Notion};

/// The rmcp server: its own tool, and the Notion resources.
#[derive(Clone)]
struct NotionServer {
    client: Arc<FakeNotion>,
    resources: Resources,
}

/// `create_page`'s argument.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CreatePage {
    /// The new page's title.
    title: String,
}

#[tool_router]
impl NotionServer {
    fn new(client: Arc<FakeNotion>) -> Result<Self, rsrc::BuildError> {
        // Announced: a tool changes these resources, so clients may hear of it.
        let server = rsrc::Server::builder("notion-example", "1.0")
            .mount_announced(
                "notion:",
                Notion {
                    client: Arc::clone(&client),
                },
            )
            .build()?;
        Ok(NotionServer {
            client,
            resources: Resources::new(server),
        })
    }

    /// Adds a page; returns its id.
    #[tool(description = "Create a Notion page with this title; returns the new page's id")]
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
impl ServerHandler for NotionServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
        .with_server_info(Implementation::new("notion-rmcp-example", "1.0"))
    }
}

// rmcp runs each request on a task of its own: as rmcp's examples, on every core.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (rest, http) = common::args();
    if !rest.is_empty() {
        eprintln!("usage: rmcp-notion [--http ADDR]");
        std::process::exit(2);
    }
    let server = NotionServer::new(Arc::new(FakeNotion::from_env()))?;
    common::serve(server, http.as_deref()).await
}
