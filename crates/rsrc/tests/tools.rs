//! The tools bridge on the wire: the four tools over the sample resources in every
//! revision, their results (validated against each revision's `CallToolResult` schema by
//! the test peer), errors as `isError` results with the resource methods' messages, and
//! the bridge off by default.

mod common;

use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::{ResourceSet, Server, ServerConfig, ToolsConfig};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{builder, connect_as, sample_set};

/// 55,000 characters, some of them two bytes long.
fn long_text() -> String {
    (0..5000).map(|i| format!("line {i:04}é\n")).collect()
}

fn server(tools: Option<ToolsConfig>) -> Server {
    let mut b = builder()
        .mount(
            "big:",
            ResourceSet::new().with_text(
                Resource::new("big:///long.txt", "long.txt").with_mime_type("text/plain"),
                long_text(),
            ),
        )
        .config(ServerConfig::default());
    if let Some(t) = tools {
        b = b.tools(t);
    }
    b.build().unwrap()
}

async fn call(p: &mut Peer, tool: &str, arguments: Value) -> Value {
    let resp = p
        .call("tools/call", json!({"name": tool, "arguments": arguments}))
        .await;
    resp["result"].clone()
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "text")
        .map(|c| c["text"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn uris(result: &Value) -> Vec<String> {
    result["structuredContent"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("no resources: {result}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_bridge_is_off_by_default_and_leaves_the_resource_methods_as_they_are() {
    let (off, on) = (server(None), server(Some(ToolsConfig::default())));
    for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut p_off = connect_as(&off, v).await;
        let mut p_on = connect_as(&on, v).await;
        let list = p_off.call("tools/list", json!({})).await;
        assert_eq!(list["error"]["code"], -32601, "{list}");
        for (method, params) in [
            ("resources/list", json!({})),
            ("resources/read", json!({"uri": "sample:///README.md"})),
            ("resources/templates/list", json!({})),
        ] {
            let a = p_off.call(method, params.clone()).await;
            let b = p_on.call(method, params).await;
            assert!(a["result"].is_object(), "{method} in {v}: {a}");
            assert_eq!(a["result"], b["result"], "{method} in {v}");
        }
    }
    let mut modern = connect_as(&on, ProtocolVersion::V2026_07_28).await;
    let discover = modern.call("server/discover", json!({})).await;
    assert_eq!(
        discover["result"]["capabilities"]["tools"],
        json!({}),
        "{discover}"
    );
    for (server, declared) in [(&off, false), (&on, true)] {
        let mut legacy = common::connect(server);
        let init = legacy.initialize(ProtocolVersion::V2025_06_18).await;
        assert_eq!(
            init["capabilities"].get("tools").is_some(),
            declared,
            "{init}"
        );
    }
}

#[tokio::test]
async fn four_tools_are_listed_with_input_and_output_schemas_in_every_revision() {
    let on = server(Some(ToolsConfig::default()));
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&on, v).await;
        let list = p.call("tools/list", json!({})).await;
        let tools = list["result"]["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "list_resources",
                "read_resource",
                "search_resources",
                "list_resource_templates"
            ]
        );
        for t in tools {
            assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            assert_eq!(t["outputSchema"]["type"], "object", "{t}");
            assert_eq!(t["annotations"]["readOnlyHint"], true);
        }
    }
}

#[tokio::test]
async fn a_collection_lists_as_links_and_a_table_in_pages() {
    let on = server(Some(ToolsConfig {
        page: 10,
        ..ToolsConfig::default()
    }));
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&on, v).await;
        let guide = call(&mut p, "list_resources", json!({"uri": "sample:///guide"})).await;
        assert_eq!(guide["isError"], Value::Null, "{guide}");
        assert_eq!(
            uris(&guide),
            [
                "sample:///guide/a.md",
                "sample:///guide/b.md",
                "sample:///guide/deep"
            ]
        );
        let links: Vec<&Value> = guide["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["type"] == "resource_link")
            .collect();
        assert_eq!(links.len(), 3);
        assert_eq!(links[0]["uri"], "sample:///guide/a.md");
        let table = text_of(&guide);
        assert!(table.contains("dir\tsample:///guide/deep"), "{table}");
        assert_eq!(
            guide["structuredContent"]["resources"][2]["collection"],
            true
        );
    }
    // Everything, ten at a time, to the end, each once.
    let mut p = connect_as(&on, ProtocolVersion::V2025_11_25).await;
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let mut args = json!({});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = call(&mut p, "list_resources", args).await;
        let got = uris(&page);
        assert!(got.len() <= 10);
        seen.extend(got);
        cursor = page["structuredContent"]["nextCursor"]
            .as_str()
            .map(str::to_owned);
        if cursor.is_none() {
            break;
        }
        assert!(text_of(&page).contains("call again with cursor"));
    }
    let direct = p.call("resources/list", json!({})).await;
    assert_eq!(seen, common::listed_uris(&direct));
}

#[tokio::test]
async fn a_filter_keeps_matching_names_across_pages() {
    let on = server(Some(ToolsConfig {
        page: 3,
        ..ToolsConfig::default()
    }));
    let mut p = connect_as(&on, ProtocolVersion::V2025_11_25).await;
    let md = call(
        &mut p,
        "list_resources",
        json!({"uri": "sample:///guide", "filter": "*.md"}),
    )
    .await;
    assert_eq!(uris(&md), ["sample:///guide/a.md", "sample:///guide/b.md"]);
    let numbers = call(&mut p, "list_resources", json!({"filter": "num:///00001?"})).await;
    assert_eq!(
        uris(&numbers),
        ["num:///000010", "num:///000011", "num:///000012"]
    );
    let bad = call(&mut p, "list_resources", json!({"filter": "a[b"})).await;
    assert_eq!(bad["isError"], true);
    assert!(text_of(&bad).contains("not a glob"), "{bad}");
}

#[tokio::test]
async fn a_read_embeds_the_text_format_and_names_the_others() {
    let on = server(Some(ToolsConfig::default()));
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&on, v).await;
        let pdf = call(
            &mut p,
            "read_resource",
            json!({"uri": "sample:///report.pdf"}),
        )
        .await;
        let embedded = &pdf["content"][0];
        assert_eq!(embedded["type"], "resource");
        assert_eq!(embedded["resource"]["text"], "Extracted text");
        assert_eq!(embedded["resource"]["mimeType"], "text/plain");
        assert!(text_of(&pdf).contains("application/pdf"), "{pdf}");
        assert_eq!(
            pdf["structuredContent"]["formats"],
            json!(["application/pdf", "text/plain"])
        );
        let raw = call(
            &mut p,
            "read_resource",
            json!({"uri": "sample:///report.pdf", "mime_type": "application/pdf"}),
        )
        .await;
        assert!(raw["content"][0]["resource"]["blob"].is_string(), "{raw}");
        let wrong = call(
            &mut p,
            "read_resource",
            json!({"uri": "sample:///report.pdf", "mime_type": "text/html"}),
        )
        .await;
        assert_eq!(wrong["isError"], true);
        assert!(text_of(&wrong).contains("application/pdf, text/plain"));
    }
}

#[tokio::test]
async fn long_text_is_cut_with_a_note_and_read_on_from_the_offset() {
    let on = server(Some(ToolsConfig::default()));
    let mut p = connect_as(&on, ProtocolVersion::V2026_07_28).await;
    let mut offset = 0;
    let mut whole = String::new();
    let mut calls = 0;
    loop {
        let part = call(
            &mut p,
            "read_resource",
            json!({"uri": "big:///long.txt", "offset": offset}),
        )
        .await;
        calls += 1;
        let text = part["content"][0]["resource"]["text"].as_str().unwrap();
        assert!(text.chars().count() <= 20_000);
        whole.push_str(text);
        let s = &part["structuredContent"];
        assert_eq!(s["total"], 55_000);
        match s["nextOffset"].as_u64() {
            Some(next) => {
                assert!(
                    text_of(&part).contains(&format!("offset {next}")),
                    "{}",
                    text_of(&part)
                );
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(calls, 3);
    assert_eq!(whole, long_text());
    let slice = call(
        &mut p,
        "read_resource",
        json!({"uri": "big:///long.txt", "offset": 10, "length": 5}),
    )
    .await;
    assert_eq!(slice["content"][0]["resource"]["text"], "\nline");
    let past = call(
        &mut p,
        "read_resource",
        json!({"uri": "big:///long.txt", "offset": 55_000}),
    )
    .await;
    assert_eq!(past["isError"], true);
}

#[tokio::test]
async fn search_finds_by_title_and_says_when_nothing_matches() {
    let on = server(Some(ToolsConfig::default()));
    let mut p = connect_as(&on, ProtocolVersion::V2025_11_25).await;
    let hit = call(
        &mut p,
        "search_resources",
        json!({"query": "QUARTERLY report"}),
    )
    .await;
    assert_eq!(uris(&hit), ["sample:///report.pdf"]);
    assert_eq!(hit["content"][1]["type"], "resource_link");
    let miss = call(&mut p, "search_resources", json!({"query": "zebra"})).await;
    assert!(uris(&miss).is_empty());
    assert_eq!(text_of(&miss), "Nothing matches \"zebra\".");
    let empty = call(&mut p, "search_resources", json!({"query": "  "})).await;
    assert_eq!(empty["isError"], true);
}

#[tokio::test]
async fn failures_are_error_results_with_the_resource_methods_messages() {
    let on = server(Some(ToolsConfig::default()));
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&on, v).await;
        let direct = p
            .call("resources/read", json!({"uri": "sample:///missing"}))
            .await;
        let via_tool = call(&mut p, "read_resource", json!({"uri": "sample:///missing"})).await;
        assert_eq!(via_tool["isError"], true);
        assert_eq!(text_of(&via_tool), direct["error"]["message"], "{v}");
        let no_uri = call(&mut p, "read_resource", json!({})).await;
        assert_eq!(no_uri["isError"], true);
        let bad_type = call(&mut p, "read_resource", json!({"uri": 7})).await;
        assert_eq!(bad_type["isError"], true);
        let unknown = p
            .call("tools/call", json!({"name": "delete_everything"}))
            .await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    }
}

#[tokio::test]
async fn templates_are_listed_as_a_tool_too() {
    let on = server(Some(ToolsConfig::default()));
    let mut p = connect_as(&on, ProtocolVersion::V2025_06_18).await;
    let t = call(&mut p, "list_resource_templates", json!({})).await;
    let templates = t["structuredContent"]["resourceTemplates"]
        .as_array()
        .unwrap();
    assert!(
        templates.iter().any(|t| t["uriTemplate"] == "num:///{n}"),
        "{t}"
    );
    assert!(text_of(&t).contains("num:///{n}"));
}

#[tokio::test]
async fn without_the_bridge_an_application_serves_its_own_tools() {
    let server = Server::builder("x", "0")
        .mount("sample:///", sample_set())
        .method("tools/list", |_, _| async {
            Ok(json!({
                "tools": [{"name": "own", "inputSchema": {"type": "object"}}],
                "ttlMs": 0,
                "cacheScope": "public"
            }))
        })
        .capability("tools", json!({}))
        .build()
        .unwrap();
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&server, v).await;
        let list = p.call("tools/list", json!({})).await;
        assert_eq!(list["result"]["tools"][0]["name"], "own", "{v}: {list}");
    }
}

#[test]
fn an_extension_cannot_take_the_bridges_names() {
    let built = Server::builder("x", "0")
        .tools(ToolsConfig::default())
        .method("tools/list", |_, _| async { Ok(json!({})) })
        .build();
    assert!(built.is_err());
}

/// Lists nothing, but finds its books by searching: only a provider's own search can
/// find them.
struct Catalog;

impl rsrc::Provider for Catalog {
    async fn list(
        &self,
        _: &rsrc::RequestContext,
        _: rsrc::ListRequest<'_>,
    ) -> Result<rsrc::Page, rsrc::ResourceError> {
        Ok(rsrc::Page::default())
    }

    async fn metadata(
        &self,
        _: &rsrc::RequestContext,
        uri: &str,
    ) -> Result<Resource, rsrc::ResourceError> {
        Err(rsrc::ResourceError::not_found(uri))
    }

    async fn read(
        &self,
        _: &rsrc::RequestContext,
        uri: &str,
    ) -> Result<rsrc::ReadOutput, rsrc::ResourceError> {
        Err(rsrc::ResourceError::not_found(uri))
    }

    async fn search(
        &self,
        _: &rsrc::RequestContext,
        req: rsrc::SearchRequest<'_>,
    ) -> Result<Option<rsrc::Page>, rsrc::ResourceError> {
        let start = req.after.map_or(0, |a| usize::from(a[0]) + 1);
        let books: Vec<Resource> = (0..7)
            .map(|i| Resource::new(format!("book:///{i}"), format!("Dune volume {i}")))
            .filter(|r| req.matches_resource(r))
            .collect();
        let end = books.len().min(start + req.limit);
        Ok(Some(rsrc::Page {
            resources: books[start..end].iter().cloned().map(Into::into).collect(),
            next: (end < books.len()).then(|| vec![u8::try_from(end - 1).unwrap()]),
            cache: None,
        }))
    }
}

#[tokio::test]
async fn a_provider_that_searches_answers_itself_in_pages() {
    let server = Server::builder("rsrc-test", "0.0.0")
        .mount("sample:", sample_set())
        .mount("book:", Catalog)
        .tools(ToolsConfig {
            page: 3,
            ..ToolsConfig::default()
        })
        .build()
        .unwrap();
    let mut p = connect_as(&server, ProtocolVersion::V2025_11_25).await;
    let mut found = Vec::new();
    let mut cursor = None;
    loop {
        let mut args = json!({"query": "dune"});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = call(&mut p, "search_resources", args).await;
        found.extend(uris(&page));
        cursor = page["structuredContent"]["nextCursor"]
            .as_str()
            .map(str::to_owned);
        let Some(c) = &cursor else { break };
        // A cursor continues its own search only.
        let other = call(
            &mut p,
            "search_resources",
            json!({"query": "report", "cursor": c}),
        )
        .await;
        assert_eq!(other["isError"], true, "{other}");
    }
    let expected: Vec<String> = (0..7).map(|i| format!("book:///{i}")).collect();
    assert_eq!(found, expected);
}

/// Lists nothing but always says more follows: a provider bug the bridge must survive.
struct Endless;

impl rsrc::Provider for Endless {
    async fn list(
        &self,
        _: &rsrc::RequestContext,
        _: rsrc::ListRequest<'_>,
    ) -> Result<rsrc::Page, rsrc::ResourceError> {
        Ok(rsrc::Page {
            resources: Vec::new(),
            next: Some(vec![1]),
            cache: None,
        })
    }

    async fn metadata(
        &self,
        _: &rsrc::RequestContext,
        uri: &str,
    ) -> Result<Resource, rsrc::ResourceError> {
        Err(rsrc::ResourceError::not_found(uri))
    }

    async fn read(
        &self,
        _: &rsrc::RequestContext,
        uri: &str,
    ) -> Result<rsrc::ReadOutput, rsrc::ResourceError> {
        Err(rsrc::ResourceError::not_found(uri))
    }
}

#[tokio::test]
async fn a_provider_returning_empty_pages_forever_does_not_hang_a_tool_call() {
    let server = Server::builder("rsrc-test", "0.0.0")
        .mount("endless:", Endless)
        .tools(ToolsConfig::default())
        .build()
        .unwrap();
    let mut p = connect_as(&server, ProtocolVersion::V2025_11_25).await;
    for (tool, args) in [
        ("list_resources", json!({"filter": "*.md"})),
        ("search_resources", json!({"query": "anything"})),
    ] {
        let result =
            tokio::time::timeout(std::time::Duration::from_secs(20), call(&mut p, tool, args))
                .await
                .expect("the call ends");
        assert!(uris(&result).is_empty());
        assert!(
            result["structuredContent"]["nextCursor"].is_string(),
            "{result}"
        );
    }
}
