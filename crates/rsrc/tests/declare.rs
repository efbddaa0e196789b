//! Declared resources written by hand with `rsrc::declare::Resources` (what the
//! `#[resources]` macro expands to): typed variables, content conversions, format
//! alternatives, collections with children, list functions in `resources/list`,
//! completion with resolved variables, and declaration errors. Raw JSON on the wire, every
//! message schema-validated by the peer.

mod common;

use rsrc::declare::{Child, IntoContent, Json, ListItem, Options, Resources, Typed};
use rsrc::protocol::{ProtocolVersion, Resource, ResourceTemplate};
use rsrc::{BuildError, NotFound, ResourceError, Server, ServerConfig};
use rsrc_testkit::Peer;
use serde_json::json;

struct Library {
    books: Vec<(u32, &'static str)>,
}

fn library() -> Resources<Library> {
    Resources::new(Library {
        books: vec![(1, "Dune"), (2, "Emma"), (3, "Ulysses"), (12, "Beloved")],
    })
    .resource(
        Resource::new("lib://info", "info").with_mime_type("application/json"),
        Options::new(),
        |lib, _ctx| async move { Json(json!({ "books": lib.books.len() })).into_content() },
    )
    .template(
        ResourceTemplate::new("lib://books/{id}", "book"),
        Options::new(),
        |lib, _ctx, vars| async move {
            let id: u32 = vars.get("id")?;
            let (_, title) = lib.books.iter().find(|(i, _)| *i == id).ok_or(NotFound)?;
            (
                Json(json!({ "id": id, "title": title })),
                Typed::new("text/csv", format!("id,title\n{id},{title}\n")),
            )
                .into_content()
        },
    )
    .list("lib://books/{id}", |lib, _ctx| async move {
        Ok(lib
            .books
            .iter()
            .map(|(id, title)| ListItem::new(id).title(*title))
            .collect())
    })
    .template(
        ResourceTemplate::new("lib://search{?q,limit}", "search"),
        Options::new(),
        |lib, _ctx, vars| async move {
            let q: Option<String> = vars.get_optional("q")?;
            let limit: Option<usize> = vars.get_optional("limit")?;
            let hits: Vec<&str> = lib
                .books
                .iter()
                .map(|(_, t)| *t)
                .filter(|t| q.as_deref().is_none_or(|q| t.contains(q)))
                .take(limit.unwrap_or(usize::MAX))
                .collect();
            Json(hits).into_content()
        },
    )
    .template(
        ResourceTemplate::new("lib://shelf/{+path}", "shelf path"),
        Options::new(),
        |_lib, _ctx, vars| async move {
            let segments: Vec<String> = vars.get_segments("path")?;
            segments.join(" > ").into_content()
        },
    )
    .template(
        ResourceTemplate::new("lib://authors/{letter}", "by letter"),
        Options::new().collection(),
        |lib, _ctx, vars| async move {
            let letter: char = vars.get("letter")?;
            let children: Vec<Child> = lib
                .books
                .iter()
                .filter(|(_, t)| t.starts_with(letter))
                .map(|(id, t)| {
                    Child::new(Resource::new(format!("lib://books/{id}"), *t)).with(t.to_string())
                })
                .collect();
            children.into_content()
        },
    )
    .complete("lib://books/{id}", "id", |lib, input| async move {
        Ok(lib
            .books
            .iter()
            .map(|(id, _)| id.to_string())
            .filter(|id| id.starts_with(&input.value))
            .collect())
    })
}

fn server(page_size: usize) -> Server {
    Server::builder("t", "0")
        .mount("lib:", library())
        .config(ServerConfig {
            page_size,
            ..ServerConfig::default()
        })
        .build()
        .unwrap()
}

async fn peer(v: ProtocolVersion) -> Peer {
    common::connect_as(&server(1000), v).await
}

const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

#[tokio::test]
async fn a_static_resource_returning_json_is_application_json_text() {
    for v in ERAS {
        let mut p = peer(v).await;
        let r = p.call("resources/read", json!({"uri": "lib://info"})).await;
        let c = &r["result"]["contents"][0];
        assert_eq!(c["mimeType"], "application/json");
        assert_eq!(c["text"], r#"{"books":4}"#);
    }
}

#[tokio::test]
async fn a_variable_that_does_not_parse_is_not_found_with_the_uri() {
    for (v, code) in [(ERAS[0], -32002), (ERAS[1], -32602)] {
        let mut p = peer(v).await;
        for uri in ["lib://books/abc", "lib://books/99"] {
            let r = p.call("resources/read", json!({"uri": uri})).await;
            assert_eq!(r["error"]["code"], code, "{r}");
            assert_eq!(r["error"]["data"]["uri"], uri);
        }
    }
}

#[tokio::test]
async fn a_tuple_becomes_format_alternatives_of_one_uri() {
    let mut p = peer(ERAS[0]).await;
    let r = p
        .call("resources/read", json!({"uri": "lib://books/2"}))
        .await;
    let contents = r["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2);
    assert!(contents.iter().all(|c| c["uri"] == "lib://books/2"));
    assert_eq!(contents[0]["mimeType"], "application/json");
    assert_eq!(contents[1]["mimeType"], "text/csv");
    assert_eq!(contents[1]["text"], "id,title\n2,Emma\n");
}

#[tokio::test]
async fn query_variables_are_optional_and_typed() {
    let mut p = peer(ERAS[0]).await;
    let all = p
        .call("resources/read", json!({"uri": "lib://search"}))
        .await;
    assert_eq!(
        all["result"]["contents"][0]["text"],
        r#"["Dune","Emma","Ulysses","Beloved"]"#
    );
    let some = p
        .call("resources/read", json!({"uri": "lib://search?q=e&limit=2"}))
        .await;
    assert_eq!(
        some["result"]["contents"][0]["text"],
        r#"["Dune","Ulysses"]"#
    );
    let bad = p
        .call("resources/read", json!({"uri": "lib://search?limit=many"}))
        .await;
    assert_eq!(bad["error"]["code"], -32002);
}

#[tokio::test]
async fn segments_never_include_dot_segments() {
    let mut p = peer(ERAS[0]).await;
    let ok = p
        .call(
            "resources/read",
            json!({"uri": "lib://shelf/fiction/classics"}),
        )
        .await;
    assert_eq!(ok["result"]["contents"][0]["text"], "fiction > classics");
    for uri in [
        "lib://shelf/fiction/../secret",
        "lib://shelf/a//b",
        "lib://shelf/.",
    ] {
        let r = p.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(r["error"]["code"], -32002, "{uri}: {r}");
    }
}

#[tokio::test]
async fn a_list_function_puts_concrete_resources_in_the_listing_page_by_page() {
    let mut p = common::connect_as(&server(2), ERAS[0]).await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = p.request("resources/list", params).await;
        for r in page["result"]["resources"].as_array().unwrap() {
            seen.push((r["uri"].as_str().unwrap().to_owned(), r["title"].clone()));
        }
        match page["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let uris: Vec<&str> = seen.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(
        uris,
        [
            "lib://books/1",
            "lib://books/12",
            "lib://books/2",
            "lib://books/3",
            "lib://info"
        ]
    );
    assert_eq!(seen[0].1, "Dune");
}

#[tokio::test]
async fn a_collection_lists_and_reads_its_children() {
    for v in ERAS {
        let mut p = peer(v).await;
        let meta = p
            .call("resources/metadata", json!({"uri": "lib://authors/E"}))
            .await;
        assert_eq!(meta["result"]["resource"]["resourceType"], "collection");
        let list = p
            .call("resources/list", json!({"uri": "lib://authors/E"}))
            .await;
        let children = list["result"]["resources"].as_array().unwrap();
        assert_eq!(children.len(), 1);
        assert_eq!(children[0]["uri"], "lib://books/2");
        assert_eq!(children[0]["resourceType"], "document");
        let read = p
            .call("resources/read", json!({"uri": "lib://authors/E"}))
            .await;
        assert_eq!(read["result"]["contents"][0]["uri"], "lib://books/2");
        assert_eq!(read["result"]["contents"][0]["text"], "Emma");
        let doc = p
            .call("resources/list", json!({"uri": "lib://books/2"}))
            .await;
        assert_eq!(
            doc["error"]["code"], -32602,
            "a document has no children: {doc}"
        );
    }
}

#[tokio::test]
async fn completion_answers_per_variable_and_is_declared() {
    let mut p = peer(ERAS[0]).await;
    let r = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "lib://books/{id}"}, "argument": {"name": "id", "value": "1"}}),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["1", "12"]));
}

#[test]
fn a_declaration_naming_an_unknown_template_fails_the_build() {
    let set = Resources::new(()).list("lib://nowhere/{x}", |_, _| async {
        Ok(Vec::<ListItem>::new())
    });
    let err = Server::builder("t", "0")
        .mount("lib:", set)
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, BuildError::Declaration { prefix, .. } if prefix == "lib:"),
        "{err}"
    );
    assert!(err.to_string().contains("lib://nowhere/{x}"), "{err}");
}

#[test]
fn a_uri_declared_twice_fails_the_build() {
    let read = |_: std::sync::Arc<()>, _| async { "x".into_content() };
    let set = Resources::new(())
        .resource(Resource::new("a://x", "x"), Options::new(), read)
        .resource(Resource::new("a://x", "y"), Options::new(), read);
    let err = Server::builder("t", "0")
        .mount("a:", set)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("a://x is declared twice"), "{err}");
    let bad = Resources::new(()).template(
        ResourceTemplate::new("a://{unclosed", "bad"),
        Options::new(),
        |_, _, _| async { Err::<rsrc::declare::Content, _>(ResourceError::from(NotFound)) },
    );
    assert!(Server::builder("t", "0").mount("a:", bad).build().is_err());
}
