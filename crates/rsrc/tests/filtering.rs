//! SEP-2564 server-side filtering on the wire, in raw JSON with every server message
//! validated against the schema of its revision: the `resources.filtering` capability
//! in both eras, globs on names and URIs, AND across fields and OR within one, the
//! default listing across mounts (declared resources with a template's listed ones, and
//! a provider that ignores the filter), a collection's children, templates, cursors over
//! a filtered walk (refused under another filter or none), invalid patterns (`-32602`),
//! bounded work per page, and the tools bridge's `filter`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rsrc::declare::ListItem;
use rsrc::protocol::{ProtocolVersion, Resource, ResourceTemplate};
use rsrc::{
    ListRequest, Page, Provider, ReadOutput, Representation, RequestContext, ResourceError,
    ResourceSet, Server, ServerConfig, TemplateResource, ToolsConfig,
};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{Numbers, connect_as, listed_uris, sample_set};

/// [`Numbers`], counting the resources it hands out (it ignores the filter: the engine
/// applies it).
struct Counted {
    inner: Numbers,
    handed: Arc<AtomicUsize>,
}

impl Provider for Counted {
    fn templates(&self) -> Vec<ResourceTemplate> {
        self.inner.templates()
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        let page = self.inner.list(ctx, req).await?;
        self.handed
            .fetch_add(page.resources.len(), Ordering::SeqCst);
        Ok(page)
    }

    async fn metadata(&self, ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        self.inner.metadata(ctx, uri).await
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        self.inner.read(ctx, uri).await
    }
}

/// `team:///{member}`, whose list function names three members.
fn team() -> ResourceSet {
    let member = TemplateResource::new(
        ResourceTemplate::new("team:///{member}", "member"),
        |_ctx, vars| async move {
            Ok(vec![Representation::text(
                vars.str("member").unwrap_or_default().to_owned(),
            )])
        },
    )
    .unwrap()
    .with_list(|_ctx| async {
        Ok(["ada", "bob", "cyd"]
            .into_iter()
            .map(|m| ListItem::new(m).name(format!("{m}.member")))
            .collect())
    })
    .unwrap();
    ResourceSet::new()
        .with_text(Resource::new("team:///about", "about.md"), "the team")
        .with_text(Resource::new("team:///bz", "bz.md"), "last")
        .with_template(member)
}

/// The sample set, the team, and `n` numbers (names `0`…) at `num:`, with `page_size`;
/// the counter of numbers handed out.
fn server(n: usize, page_size: usize, tools: bool) -> (Server, Arc<AtomicUsize>) {
    let handed = Arc::new(AtomicUsize::new(0));
    let numbers = Counted {
        inner: Numbers { scheme: "num", n },
        handed: Arc::clone(&handed),
    };
    let mut b = Server::builder("rsrc-test", "0.0.0")
        .mount("sample:", sample_set())
        .mount("team:", team())
        .mount("num:", numbers)
        .config(ServerConfig {
            page_size,
            ..ServerConfig::default()
        });
    if tools {
        b = b.tools(ToolsConfig::default());
    }
    (b.build().unwrap(), handed)
}

/// Every URI of a complete walk of `method` with `params`, and the number of pages.
async fn walk(p: &mut Peer, method: &str, mut params: Value) -> (Vec<String>, usize) {
    let key = if method == "resources/list" {
        "resources"
    } else {
        "resourceTemplates"
    };
    let (mut uris, mut pages) = (Vec::new(), 0);
    loop {
        let resp = p.call(method, params.clone()).await;
        let result = &resp["result"];
        pages += 1;
        for r in result[key].as_array().unwrap_or_else(|| panic!("{resp}")) {
            let uri = r.get("uri").or(r.get("uriTemplate")).unwrap();
            uris.push(uri.as_str().unwrap().to_owned());
        }
        match result.get("nextCursor") {
            Some(c) => params["cursor"] = c.clone(),
            None => return (uris, pages),
        }
        assert!(pages < 1000, "the walk does not end");
    }
}

async fn listed(p: &mut Peer, filter: Value) -> Vec<String> {
    walk(p, "resources/list", json!({ "filter": filter }))
        .await
        .0
}

#[tokio::test]
async fn the_filtering_capability_is_declared_in_both_eras() {
    let (srv, _) = server(25, 1000, false);
    let supported = json!({"supported": ["namePatterns", "uriPatterns"]});
    for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let mut p = common::connect(&srv);
        let init = p.initialize(v).await;
        assert_eq!(
            init["capabilities"]["resources"]["filtering"], supported,
            "{v}"
        );
    }
    let mut p = connect_as(&srv, ProtocolVersion::V2026_07_28).await;
    let discover = p.call("server/discover", json!({})).await;
    assert_eq!(
        discover["result"]["capabilities"]["resources"]["filtering"],
        supported
    );
}

#[tokio::test]
async fn name_and_uri_globs_select_across_every_mount_in_both_eras() {
    let (srv, _) = server(25, 1000, false);
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&srv, v).await;
        assert_eq!(
            listed(&mut p, json!({"namePatterns": ["*.md"]})).await,
            [
                "sample:///README.md",
                "sample:///guide/a.md",
                "sample:///guide/b.md",
                "sample:///guide/deep/c.md",
                "team:///about",
                "team:///bz"
            ],
            "{v}"
        );
        // `**` crosses segments; the collection itself is not below itself.
        assert_eq!(
            listed(&mut p, json!({"uriPatterns": ["sample:///guide/**"]})).await,
            [
                "sample:///guide/a.md",
                "sample:///guide/b.md",
                "sample:///guide/deep",
                "sample:///guide/deep/c.md"
            ],
            "{v}"
        );
        // AND across fields: `*` stays in one segment.
        assert_eq!(
            listed(
                &mut p,
                json!({"namePatterns": ["*.md"], "uriPatterns": ["sample:///guide/*"]})
            )
            .await,
            ["sample:///guide/a.md", "sample:///guide/b.md"],
            "{v}"
        );
        // OR within a field, reaching a template's listed resources and a provider that
        // ignores the filter.
        let or = listed(
            &mut p,
            json!({"namePatterns": ["logo.png", "???.member", "2?"]}),
        )
        .await;
        assert_eq!(
            or,
            [
                "sample:///logo.png",
                "team:///ada",
                "team:///bob",
                "team:///cyd",
                "num:///000020",
                "num:///000021",
                "num:///000022",
                "num:///000023",
                "num:///000024"
            ],
            "{v}"
        );
        // Matching is case-sensitive and whole.
        assert!(
            listed(&mut p, json!({"namePatterns": ["readme.md", "README"]}))
                .await
                .is_empty()
        );
    }
}

#[tokio::test]
async fn an_absent_or_empty_filter_lists_everything() {
    let (srv, _) = server(25, 1000, false);
    let mut p = connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    let all = walk(&mut p, "resources/list", json!({})).await.0;
    assert_eq!(all.len(), 14 + 5 + 25);
    for empty in [
        json!({}),
        json!({"namePatterns": []}),
        json!({"namePatterns": [], "uriPatterns": []}),
        json!({"unknownField": ["x"]}),
    ] {
        assert_eq!(listed(&mut p, empty.clone()).await, all, "{empty}");
    }
}

#[tokio::test]
async fn a_collection_s_children_are_filtered_too() {
    let (srv, _) = server(25, 1000, false);
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&srv, v).await;
        let md = p
            .call(
                "resources/list",
                json!({"uri": "sample:///guide", "filter": {"namePatterns": ["*.md"]}}),
            )
            .await;
        assert_eq!(
            listed_uris(&md),
            ["sample:///guide/a.md", "sample:///guide/b.md"],
            "{v}"
        );
        let deep = p
            .call(
                "resources/list",
                json!({"uri": "sample:///guide", "filter": {"uriPatterns": ["sample:///guide/d*"]}}),
            )
            .await;
        assert_eq!(listed_uris(&deep), ["sample:///guide/deep"], "{v}");
    }
}

#[tokio::test]
async fn templates_are_filtered_by_name_and_uri_template() {
    let (srv, _) = server(25, 1000, false);
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&srv, v).await;
        let templates = |filter: Value| json!({ "filter": filter });
        let by_name = walk(
            &mut p,
            "resources/templates/list",
            templates(json!({"namePatterns": ["mem*"]})),
        )
        .await
        .0;
        assert_eq!(by_name, ["team:///{member}"], "{v}");
        // A template is matched as written: braces are literal.
        let by_uri = walk(
            &mut p,
            "resources/templates/list",
            templates(json!({"uriPatterns": ["num:///{n}", "nothing://**"]})),
        )
        .await
        .0;
        assert_eq!(by_uri, ["num:///{n}"], "{v}");
        let none = walk(
            &mut p,
            "resources/templates/list",
            templates(json!({"namePatterns": ["numbers"], "uriPatterns": ["team:*"]})),
        )
        .await
        .0;
        assert!(none.is_empty(), "fields are ANDed ({v})");
    }
}

#[tokio::test]
async fn a_filtered_walk_pages_with_cursors_sealed_to_its_filter() {
    let (srv, _) = server(300, 2, false);
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&srv, v).await;
        let filter = json!({"namePatterns": ["*7*"]});
        let (uris, pages) = walk(&mut p, "resources/list", json!({ "filter": filter })).await;
        let expected: Vec<String> = (0..300)
            .filter(|i: &usize| i.to_string().contains('7'))
            .map(|i| format!("num:///{i:06}"))
            .collect();
        assert_eq!(uris, expected, "every match once, in order ({v})");
        assert!(pages >= expected.len() / 2, "{pages} pages ({v})");

        let first = p.call("resources/list", json!({ "filter": filter })).await;
        let cursor = first["result"]["nextCursor"].clone();
        assert!(cursor.is_string(), "{first}");
        // The same filter continues it.
        let same = p
            .call(
                "resources/list",
                json!({"cursor": cursor, "filter": {"namePatterns": ["*7*"], "uriPatterns": []}}),
            )
            .await;
        assert!(same["result"].is_object(), "{same}");
        // Another filter, the same patterns in another field, or none: refused.
        for other in [
            json!({"cursor": cursor, "filter": {"namePatterns": ["*8*"]}}),
            json!({"cursor": cursor, "filter": {"uriPatterns": ["*7*"]}}),
            json!({"cursor": cursor, "filter": {"namePatterns": ["*7*", "*8*"]}}),
            json!({ "cursor": cursor }),
        ] {
            let resp = p.call("resources/list", other.clone()).await;
            assert_eq!(resp["error"]["code"], -32602, "{other} ({v}): {resp}");
        }
        // An unfiltered cursor does not continue a filtered listing.
        let plain = p.call("resources/list", json!({})).await;
        let resp = p
            .call(
                "resources/list",
                json!({"cursor": plain["result"]["nextCursor"], "filter": filter}),
            )
            .await;
        assert_eq!(resp["error"]["code"], -32602, "{v}: {resp}");
        // Nor a filtered collection's cursor another filter.
        let children = p
            .call(
                "resources/list",
                json!({"uri": "sample:///guide", "filter": {"namePatterns": ["*"]}}),
            )
            .await;
        let resp = p
            .call(
                "resources/list",
                json!({
                    "uri": "sample:///guide",
                    "cursor": children["result"]["nextCursor"],
                    "filter": {"namePatterns": ["*.md"]}
                }),
            )
            .await;
        assert_eq!(resp["error"]["code"], -32602, "{v}: {resp}");
    }
}

#[tokio::test]
async fn a_filtered_template_listing_pages_under_its_own_filter() {
    let (srv, _) = server(25, 1, false);
    let mut p = connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    let filter = json!({"uriPatterns": ["*:///{*}"]});
    let (uris, pages) = walk(
        &mut p,
        "resources/templates/list",
        json!({ "filter": filter }),
    )
    .await;
    assert_eq!(uris, ["team:///{member}", "num:///{n}"]);
    assert_eq!(pages, 2);
    let first = p
        .call("resources/templates/list", json!({ "filter": filter }))
        .await;
    let resp = p
        .call(
            "resources/templates/list",
            json!({"cursor": first["result"]["nextCursor"]}),
        )
        .await;
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
}

#[tokio::test]
async fn invalid_patterns_are_invalid_params_in_both_eras() {
    let (srv, _) = server(25, 1000, false);
    let long = "a".repeat(513);
    let many: Vec<String> = (0..33).map(|i| format!("{i}")).collect();
    let cases = [
        (
            json!({"namePatterns": ["ok", "[a"]}),
            "filter.namePatterns[1]",
        ),
        (json!({"uriPatterns": ["[z-a]"]}), "filter.uriPatterns[0]"),
        (json!({"namePatterns": ["a\\"]}), "escapes nothing"),
        (json!({"namePatterns": [""]}), "empty pattern"),
        (json!({"uriPatterns": [long]}), "longer than 512 bytes"),
        (json!({"namePatterns": many}), "at most 32"),
    ];
    for v in ProtocolVersion::ALL {
        let mut p = connect_as(&srv, v).await;
        for method in ["resources/list", "resources/templates/list"] {
            for (filter, says) in &cases {
                let resp = p.call(method, json!({ "filter": filter })).await;
                assert_eq!(
                    resp["error"]["code"], -32602,
                    "{method} {filter} ({v}): {resp}"
                );
                let message = resp["error"]["message"].as_str().unwrap();
                assert!(message.contains(says), "{message} ({v})");
            }
            // Not an array of strings: the params do not decode.
            let resp = p
                .call(method, json!({"filter": {"namePatterns": "*.md"}}))
                .await;
            assert_eq!(resp["error"]["code"], -32602, "{method} ({v}): {resp}");
        }
        let children = p
            .call(
                "resources/list",
                json!({"uri": "sample:///guide", "filter": {"namePatterns": ["["]}}),
            )
            .await;
        assert_eq!(children["error"]["code"], -32602, "{v}: {children}");
    }
}

#[tokio::test]
async fn a_filter_matching_nothing_costs_bounded_work_per_page() {
    // 35,000 numbers from a provider that ignores the filter: the engine examines at most
    // 10,000 (one provider page more at most) per request, answering empty pages with a
    // cursor, until the walk ends.
    let (srv, handed) = server(35_000, 1000, false);
    let mut p = connect_as(&srv, ProtocolVersion::V2026_07_28).await;
    let mut params = json!({"filter": {"namePatterns": ["nothing"]}});
    let mut pages = 0;
    loop {
        let before = handed.load(Ordering::SeqCst);
        let resp = p.call("resources/list", params.clone()).await;
        let examined = handed.load(Ordering::SeqCst) - before;
        pages += 1;
        assert!(examined <= 11_000, "page {pages} examined {examined}");
        assert_eq!(listed_uris(&resp), Vec::<&str>::new());
        match resp["result"].get("nextCursor") {
            Some(c) => params["cursor"] = c.clone(),
            None => break,
        }
    }
    assert!((4..=5).contains(&pages), "{pages} pages");
    assert_eq!(handed.load(Ordering::SeqCst), 35_000, "each examined once");
}

#[tokio::test]
async fn a_mount_none_of_whose_uris_can_match_is_not_asked() {
    let (srv, handed) = server(35_000, 1000, false);
    let mut p = connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    let found = listed(&mut p, json!({"uriPatterns": ["sample:///guide/**"]})).await;
    assert_eq!(found.len(), 4);
    assert_eq!(handed.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_tools_bridge_filters_on_the_server_within_its_scan() {
    let (srv, handed) = server(35_000, 1000, true);
    let mut p = connect_as(&srv, ProtocolVersion::V2025_11_25).await;
    let call = |filter: &str| json!({"name": "list_resources", "arguments": {"filter": filter}});
    let md = p.call("tools/call", call("*.md")).await;
    let links: Vec<&str> = md["result"]["structuredContent"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        links,
        [
            "sample:///README.md",
            "sample:///guide/a.md",
            "sample:///guide/b.md",
            "sample:///guide/deep/c.md",
            "team:///about",
            "team:///bz"
        ]
    );
    // Matching nothing: one call examines at most `scan` (10,000) and says where to go on.
    let before = handed.load(Ordering::SeqCst);
    let none = p.call("tools/call", call("nothing")).await;
    let examined = handed.load(Ordering::SeqCst) - before;
    assert!((10_000..=11_000).contains(&examined), "{examined}");
    assert!(
        none["result"]["structuredContent"]["nextCursor"].is_string(),
        "{none}"
    );
    // A glob with a `/` is on URIs.
    let uri = p.call("tools/call", call("team:///b*")).await;
    let found: Vec<&str> = uri["result"]["structuredContent"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["team:///bob", "team:///bz"]);
}
