//! rsrc's resources inside an rmcp server, through rmcp's own client, in both eras
//! (`initialize` at 2025-11-25, `server/discover` at 2026-07-28): tools and resources on
//! one server, listing with cursors, templates, reads, completion, not-found codes,
//! subscribe and listen hearing a file write (also one made before the file watcher was
//! in place), a tool call heard as `list_changed`, and the read cache with its single
//! flight.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{ERAS, Era, FakeNotion};
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, ClientRequest, CompleteRequestParams, CustomRequest,
    ErrorCode, PaginatedRequestParams, ReadResourceRequestParams, Reference, ResourceContents,
    ServerNotification, ServerResult, SubscribeRequestParams, SubscriptionFilter,
};
use rmcp::service::ServiceError;
use serde_json::json;

/// Generous: only a failure waits this long.
const WAIT: Duration = Duration::from_secs(10);

fn client_notion() -> Arc<FakeNotion> {
    Arc::new(FakeNotion::with_latency(Duration::from_millis(20)))
}

fn error_of(e: ServiceError) -> rmcp::model::ErrorData {
    match e {
        ServiceError::McpError(e) => e,
        other => panic!("not a JSON-RPC error: {other:?}"),
    }
}

fn text_of(c: &ResourceContents) -> &str {
    match c {
        ResourceContents::TextResourceContents { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn tools_and_resources_are_served_by_one_server() {
    for era in ERAS {
        let notion = client_notion();
        let (client, _) = common::rmcp_client(common::hosted(&notion, 1000), era).await;
        let info = client.peer_info().map(|i| i.capabilities.clone());
        if let Some(caps) = info {
            assert!(caps.tools.is_some(), "{era:?}: {caps:?}");
            let resources = caps.resources.expect("resources declared");
            assert_eq!(resources.list_changed, Some(true));
            assert!(caps.completions.is_some());
        }
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "create_page");
        let read = client
            .read_resource(ReadResourceRequestParams::new("notion://pages/abc123"))
            .await
            .unwrap();
        let page: serde_json::Value = serde_json::from_str(text_of(&read.contents[0])).unwrap();
        assert_eq!(page["title"], "Project Roadmap", "{era:?}");
        if era == Era::Modern {
            // The rmcp server's name, not the engine's.
            let meta = read.meta.as_ref().expect("a 2026-07-28 result has _meta");
            let info = &meta.0["io.modelcontextprotocol/serverInfo"];
            assert_eq!(info["name"], "hosted", "{meta:?}");
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_listing_follows_sealed_cursors_to_every_resource_once() {
    for era in ERAS {
        let notion = client_notion();
        let (client, _) = common::rmcp_client(common::hosted(&notion, 2), era).await;
        let mut cursor = None;
        let mut uris = Vec::new();
        let mut pages = 0;
        loop {
            let page = client
                .list_resources(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await
                .unwrap();
            assert!(page.resources.len() <= 2);
            pages += 1;
            uris.extend(page.resources.into_iter().map(|r| r.uri));
            if era == Era::Modern {
                assert_eq!(page.ttl_ms, Some(0), "2026-07-28 results carry ttlMs");
            } else {
                assert_eq!(page.ttl_ms, None, "2025 results do not carry ttlMs");
            }
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        let expected = [
            "notion://pages/abc123",
            "notion://pages/def456",
            "notion://workspace/info",
            "sample:///README.md",
            "sample:///guide",
            "sample:///guide/a.md",
            "sample:///guide/b.md",
            "sample:///logo.png",
            "sample:///report.pdf",
        ];
        assert_eq!(uris, expected, "{era:?}");
        assert_eq!(pages, 5);
        let forged = client
            .list_resources(Some(
                PaginatedRequestParams::default().with_cursor(Some("AAAA".into())),
            ))
            .await
            .unwrap_err();
        assert_eq!(error_of(forged).code, ErrorCode::INVALID_PARAMS, "{era:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn templates_reads_and_completion_are_the_engines() {
    for era in ERAS {
        let notion = client_notion();
        let (client, _) = common::rmcp_client(common::hosted(&notion, 1000), era).await;
        let templates = client.list_all_resource_templates().await.unwrap();
        let mut names: Vec<_> = templates.iter().map(|t| t.uri_template.as_str()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "notion://databases/{databaseId}/schema",
                "notion://pages/{pageId}"
            ]
        );
        let schema = client
            .read_resource(ReadResourceRequestParams::new(
                "notion://databases/db1/schema",
            ))
            .await
            .unwrap();
        assert!(text_of(&schema.contents[0]).contains("\"Tasks\""));
        // Format alternatives: two contents with the same URI.
        let report = client
            .read_resource(ReadResourceRequestParams::new("sample:///report.pdf"))
            .await
            .unwrap();
        assert_eq!(report.contents.len(), 2);
        match &report.contents[0] {
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            } => {
                assert_eq!(blob, "JVBERi0xLjQgZmFrZQ==");
                assert_eq!(mime_type.as_deref(), Some("application/pdf"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(text_of(&report.contents[1]), "Extracted text");
        let completion = client
            .complete(CompleteRequestParams::new(
                Reference::for_resource("notion://pages/{pageId}"),
                ArgumentInfo::new("pageId", "d"),
            ))
            .await
            .unwrap();
        assert_eq!(completion.completion.values, ["def456"], "{era:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_missing_resource_has_the_code_of_the_era_and_its_uri() {
    for (era, code) in [(Era::Legacy, -32002), (Era::Modern, -32602)] {
        let notion = client_notion();
        let (client, _) = common::rmcp_client(common::hosted(&notion, 1000), era).await;
        let e = client
            .read_resource(ReadResourceRequestParams::new("notion://pages/nope"))
            .await
            .unwrap_err();
        let e = error_of(e);
        assert_eq!(e.code.0, code, "{era:?}");
        assert_eq!(e.data, Some(json!({"uri": "notion://pages/nope"})));
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn resources_metadata_is_answered_in_full_through_the_custom_path() {
    for era in ERAS {
        let notion = client_notion();
        let (client, _) = common::rmcp_client(common::hosted(&notion, 1000), era).await;
        let request = CustomRequest::new(
            "resources/metadata",
            Some(json!({"uri": "sample:///guide"})),
        );
        let result = client
            .send_request(ClientRequest::CustomRequest(request))
            .await
            .unwrap();
        let ServerResult::CustomResult(result) = result else {
            panic!("{result:?}");
        };
        let resource = &result.0["resource"];
        assert_eq!(
            resource["resourceType"], "collection",
            "{era:?}: {result:?}"
        );
        assert_eq!(resource["capabilities"]["list"], true);
        let unknown = CustomRequest::new("nobody/serves", None);
        let e = client
            .send_request(ClientRequest::CustomRequest(unknown))
            .await
            .unwrap_err();
        assert_eq!(error_of(e).code, ErrorCode::METHOD_NOT_FOUND);
        client.cancel().await.unwrap();
    }
}

/// A directory with one file, served in `era`; rmcp's client connected to it.
async fn watched(
    era: Era,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    rmcp::service::RunningService<rmcp::RoleClient, common::Recorder>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("watched.txt");
    std::fs::write(&file, "before").unwrap();
    let (client, heard) = common::rmcp_client(common::fs_server(dir.path()), era).await;
    (dir, file, client, heard)
}

const WATCHED: &str = "file:///watched.txt";

#[tokio::test]
async fn a_file_write_arrives_as_updated_over_subscribe() {
    let (_dir, file, client, mut heard) = watched(Era::Legacy).await;
    #[allow(deprecated)]
    client
        .subscribe(SubscribeRequestParams::new(WATCHED))
        .await
        .unwrap();
    std::fs::write(&file, "after").unwrap();
    let got = tokio::time::timeout(WAIT, heard.recv()).await.unwrap();
    assert_eq!(got.as_deref(), Some("updated file:///watched.txt"));
    let read = client
        .read_resource(ReadResourceRequestParams::new(WATCHED))
        .await
        .unwrap();
    assert_eq!(text_of(&read.contents[0]), "after");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_file_write_arrives_as_updated_over_listen() {
    let (_dir, file, client, _) = watched(Era::Modern).await;
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions([WATCHED])
        .build();
    let mut sub = client.peer().listen(filter).await.unwrap();
    let acknowledged = sub.acknowledged().resource_subscriptions.clone();
    assert_eq!(acknowledged, Some(vec![WATCHED.to_owned()]));
    std::fs::write(&file, "after").unwrap();
    let got = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    match got {
        Some(ServerNotification::ResourceUpdatedNotification(n)) => {
            assert_eq!(n.params.uri, WATCHED);
        }
        other => panic!("{other:?}"),
    }
    let read = client
        .read_resource(ReadResourceRequestParams::new(WATCHED))
        .await
        .unwrap();
    assert_eq!(text_of(&read.contents[0]), "after");
    client.cancel().await.unwrap();
}

/// A provider whose watcher is still starting: it offers subscriptions but would not
/// publish a change made now.
struct StartingWatcher(rsrc::ResourceSet);

impl rsrc::Provider for StartingWatcher {
    async fn list(
        &self,
        ctx: &rsrc::RequestContext,
        req: rsrc::ListRequest<'_>,
    ) -> Result<rsrc::Page, rsrc::ResourceError> {
        self.0.list(ctx, req).await
    }

    async fn metadata(
        &self,
        ctx: &rsrc::RequestContext,
        uri: &str,
    ) -> Result<rsrc::protocol::Resource, rsrc::ResourceError> {
        self.0.metadata(ctx, uri).await
    }

    async fn read(
        &self,
        ctx: &rsrc::RequestContext,
        uri: &str,
    ) -> Result<rsrc::ReadOutput, rsrc::ResourceError> {
        self.0.read(ctx, uri).await
    }

    fn capabilities(&self) -> rsrc::ProviderCapabilities {
        rsrc::ProviderCapabilities::default().with_subscribe(true)
    }

    fn hears_every_change(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn a_stream_acknowledged_before_a_watcher_is_in_place_is_told_to_look_again() {
    // rmcp acknowledges a listen stream before the engine subscribes it: a change made
    // then, by a provider whose watcher is not in place yet, is never published, so the
    // stream hears `updated` for what it holds (rsrc's own server would wait instead).
    let set = rsrc::ResourceSet::new().with_text(rsrc::protocol::Resource::new("t:///a", "a"), "A");
    let server = rsrc::Server::builder("starting", "1.0")
        .mount("t:", StartingWatcher(set))
        .build()
        .unwrap();
    let handler = common::FsServer {
        resources: rsrc_rmcp::Resources::new(server),
    };
    let (client, _) = common::rmcp_client(handler, Era::Modern).await;
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(["t:///a"])
        .build();
    let mut sub = client.peer().listen(filter).await.unwrap();
    let got = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    match got {
        Some(ServerNotification::ResourceUpdatedNotification(n)) => {
            assert_eq!(n.params.uri, "t:///a");
        }
        other => panic!("{other:?}"),
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_tool_call_arrives_as_list_changed_and_its_page_is_listed_and_readable() {
    for era in ERAS {
        let notion = client_notion();
        let (client, mut heard) = common::rmcp_client(common::hosted(&notion, 1000), era).await;
        let mut sub = match era {
            Era::Legacy => None,
            Era::Modern => {
                let filter = SubscriptionFilter::builder()
                    .resources_list_changed()
                    .build();
                let sub = client.peer().listen(filter).await.unwrap();
                assert_eq!(sub.acknowledged().resources_list_changed, Some(true));
                Some(sub)
            }
        };
        let args = json!({"title": "Meeting notes"});
        let called = client
            .call_tool(
                CallToolRequestParams::new("create_page")
                    .with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        let id = called.structured_content.as_ref().unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        match &mut sub {
            None => {
                let got = tokio::time::timeout(WAIT, heard.recv()).await.unwrap();
                assert_eq!(got.as_deref(), Some("list_changed"), "{era:?}");
            }
            Some(sub) => {
                let got = tokio::time::timeout(WAIT, sub.next())
                    .await
                    .unwrap()
                    .unwrap();
                assert!(
                    matches!(
                        got,
                        Some(ServerNotification::ResourceListChangedNotification(_))
                    ),
                    "{got:?}"
                );
            }
        }
        let uri = format!("notion://pages/{id}");
        let listed = client.list_all_resources().await.unwrap();
        let page = listed.iter().find(|r| r.uri == uri).expect("listed");
        assert_eq!(page.title.as_deref(), Some("Meeting notes"));
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.as_str()))
            .await
            .unwrap();
        assert!(text_of(&read.contents[0]).contains("Meeting notes"));
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn concurrent_cold_reads_make_one_backend_call_and_an_update_drops_the_entry() {
    for era in ERAS {
        let notion = client_notion();
        let hosted = common::hosted(&notion, 1000);
        let changes = hosted.resources.changes();
        let (client, _) = common::rmcp_client(hosted.clone(), era).await;
        let reads = (0..10)
            .map(|_| client.read_resource(ReadResourceRequestParams::new("notion://pages/def456")));
        for read in futures_util::future::join_all(reads).await {
            let read = read.unwrap();
            assert!(text_of(&read.contents[0]).contains("Launch Checklist"));
            if era == Era::Modern {
                assert!(
                    read.ttl_ms.is_some_and(|t| t > 0 && t <= 300_000),
                    "{read:?}"
                );
            }
        }
        assert_eq!(notion.calls(), 1, "{era:?}: one backend call for ten reads");
        client
            .read_resource(ReadResourceRequestParams::new("notion://pages/def456"))
            .await
            .unwrap();
        assert_eq!(notion.calls(), 1, "{era:?}: a later read is a hit");
        changes.updated("notion://pages/def456");
        // rmcp's client caches 2026-07-28 results for their ttlMs: ask from a new one.
        let (fresh, _) = common::rmcp_client(hosted, era).await;
        fresh
            .read_resource(ReadResourceRequestParams::new("notion://pages/def456"))
            .await
            .unwrap();
        assert_eq!(
            notion.calls(),
            2,
            "{era:?}: the update dropped the cached page"
        );
        fresh.cancel().await.unwrap();
        client.cancel().await.unwrap();
    }
}
