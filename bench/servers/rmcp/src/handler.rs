//! The MCP side of the rmcp reference server: an rmcp `ServerHandler` that answers
//! `resources/list` from the startup index in pages, `resources/templates/list` with
//! the one template `file:///{+path}`, and `resources/read` from the file on disk.
//!
//! Invariant: a read returns exactly one content item, for the URI asked, read from
//! disk at that moment; it never returns a file outside the root.

use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{
    Implementation, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ResourceTemplate, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::index::{Index, Resolve, mime_of};

/// How many resources one `resources/list` page holds.
pub(crate) const PAGE_SIZE: usize = 1000;

/// The handler: a cheap clone over the shared index (one per HTTP session).
#[derive(Clone, Debug)]
pub(crate) struct FileServer {
    index: Arc<Index>,
}

impl FileServer {
    /// A handler serving `index`.
    pub(crate) fn new(index: Arc<Index>) -> Self {
        Self { index }
    }
}

impl ServerHandler for FileServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
            .with_server_info(Implementation::new(
                "mcp-bench-rmcp",
                env!("CARGO_PKG_VERSION"),
            ))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let entries = &self.index.entries;
        let start = match request.and_then(|params| params.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&start| start <= entries.len())
                .ok_or_else(|| ErrorData::invalid_params("invalid cursor", None))?,
        };
        let end = entries.len().min(start + PAGE_SIZE);
        let page = entries[start..end]
            .iter()
            .map(|entry| entry.resource.clone())
            .collect();
        let mut result = ListResourcesResult::with_all_items(page);
        if end < entries.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new("file:///{+path}", "file")
            .with_description("Any regular file under the served directory, by its relative path");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        // The index answers for the files listed; the template for any other path.
        let (path, mime) = match self.index.get(&uri) {
            Some(entry) => (entry.path.clone(), entry.resource.mime_type.clone()),
            None => match self.index.resolve(&uri) {
                Ok(path) => {
                    let mime = mime_of(&path).to_owned();
                    (path, Some(mime))
                }
                Err(Resolve::Escapes) => {
                    return Err(ErrorData::invalid_params(
                        format!("{uri} is outside the served directory"),
                        None,
                    ));
                }
                Err(Resolve::NotFound) => return Err(not_found(&uri)),
            },
        };
        let bytes = tokio::fs::read(&path).await.map_err(|_| not_found(&uri))?;
        let mime = mime.unwrap_or_else(|| "application/octet-stream".to_owned());
        let contents = if mime.starts_with("text/") {
            match String::from_utf8(bytes) {
                Ok(text) => ResourceContents::text(text, uri),
                Err(error) => blob(error.as_bytes(), uri),
            }
        } else {
            blob(&bytes, uri)
        };
        Ok(ReadResourceResult::new(vec![contents.with_mime_type(mime)]).into())
    }
}

/// A blob content item: the bytes in standard base64.
fn blob(bytes: &[u8], uri: String) -> ResourceContents {
    ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
}

/// The SDK's resource-not-found error, with the URI as its data.
fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no resource {uri}"),
        Some(serde_json::json!({ "uri": uri })),
    )
}
