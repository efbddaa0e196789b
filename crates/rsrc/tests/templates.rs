//! Template routing and completion through the engine: typed variables, the most specific
//! template winning, listed resources winning over templates, optional unordered query
//! variables, decoding once, and completion with truthful totals.

use std::collections::BTreeSet;

use rsrc::protocol::{ProtocolVersion, Resource, ResourceTemplate};
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc::{Representation, ResourceError, ResourceSet, Server, TemplateResource};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

fn echo(
    name: &'static str,
) -> impl Fn(
    rsrc::RequestContext,
    rsrc::Vars,
) -> std::future::Ready<Result<Vec<Representation>, ResourceError>> {
    move |_ctx, vars| {
        let mut parts: Vec<String> = vars
            .captures()
            .iter()
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect();
        parts.sort();
        std::future::ready(Ok(vec![Representation::text(format!(
            "{name}: {}",
            parts.join(" ")
        ))]))
    }
}

fn template(uri: &str, name: &'static str) -> TemplateResource {
    TemplateResource::new(ResourceTemplate::new(uri, name), echo(name)).unwrap()
}

fn server() -> Server {
    let users = TemplateResource::new(
        ResourceTemplate::new("db://users/{id}", "user").with_mime_type("application/json"),
        |_ctx, vars| async move {
            let id: u64 = vars.get("id")?;
            Ok(vec![Representation::text(format!(r#"{{"id":{id}}}"#))])
        },
    )
    .unwrap()
    .with_completion("id", |input| async move {
        Ok((1..=250)
            .map(|i| i.to_string())
            .filter(|v| v.starts_with(&input.value))
            .collect())
    })
    .unwrap();
    let posts = TemplateResource::new(
        ResourceTemplate::new("db://users/{user}/posts/{post}", "post"),
        echo("post"),
    )
    .unwrap()
    .with_completion("post", |input| async move {
        // Completion sees the variables already chosen.
        let user = input.context.get("user").cloned().unwrap_or_default();
        Ok(vec![format!("{user}-first"), format!("{user}-second")])
    })
    .unwrap();
    let set = ResourceSet::new()
        .with_text(
            Resource::new("docs:///readme", "readme"),
            "the listed readme",
        )
        .with_template(template("docs:///{name}", "docs-name"))
        .with_template(template("docs:///{+path}", "docs-path"))
        .with_template(template("docs:///guide/{name}", "guide-name"))
        .with_template(template("search:///q{?q,limit}", "search"))
        .with_template(users)
        .with_template(posts);
    Server::builder("t", "0").mount("", set).build().unwrap()
}

async fn peer(server: &Server) -> Peer {
    let (r, w) = tokio::io::split(serve_in_memory(server, StreamConfig::default()));
    let mut peer = Peer::new(r, w);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer
}

async fn text(peer: &mut Peer, uri: &str) -> Value {
    let resp = peer.request("resources/read", json!({"uri": uri})).await;
    resp["result"]["contents"][0]["text"].clone()
}

#[tokio::test]
async fn typed_variables_reach_the_handler_and_bad_values_are_not_found() {
    let mut p = peer(&server()).await;
    assert_eq!(text(&mut p, "db://users/42").await, r#"{"id":42}"#);
    let resp = p
        .request("resources/read", json!({"uri": "db://users/abc"}))
        .await;
    assert_eq!(resp["error"]["code"], -32002);
    assert_eq!(resp["error"]["data"]["uri"], "db://users/abc");
    let meta = p
        .request("resources/metadata", json!({"uri": "db://users/7"}))
        .await;
    assert_eq!(meta["result"]["resource"]["name"], "user");
    assert_eq!(meta["result"]["resource"]["mimeType"], "application/json");
    assert_eq!(meta["result"]["resource"]["uri"], "db://users/7");
}

#[tokio::test]
async fn the_most_specific_template_wins_and_a_listed_resource_beats_them_all() {
    let mut p = peer(&server()).await;
    assert_eq!(text(&mut p, "docs:///readme").await, "the listed readme");
    assert_eq!(
        text(&mut p, "docs:///intro").await,
        r#"docs-name: name=String("intro")"#
    );
    assert_eq!(
        text(&mut p, "docs:///guide/setup").await,
        r#"guide-name: name=String("setup")"#
    );
    assert_eq!(
        text(&mut p, "docs:///a/b/c").await,
        r#"docs-path: path=String("a/b/c")"#
    );
}

#[tokio::test]
async fn query_variables_are_optional_unordered_and_extra_ones_ignored() {
    let mut p = peer(&server()).await;
    assert_eq!(
        text(&mut p, "search:///q?limit=5&q=rust").await,
        r#"search: limit=String("5") q=String("rust")"#
    );
    assert_eq!(
        text(&mut p, "search:///q?q=rust&page=2").await,
        r#"search: q=String("rust")"#
    );
    assert_eq!(text(&mut p, "search:///q").await, "search: ");
}

#[tokio::test]
async fn values_are_decoded_once_and_encoded_separators_cannot_traverse() {
    let mut p = peer(&server()).await;
    assert_eq!(
        text(&mut p, "docs:///a%2541").await,
        r#"docs-name: name=String("a%41")"#
    );
    // `%2F` in a simple variable does not make `{name}` match; the reserved `{+path}`
    // template takes it, as one literal segment value.
    assert_eq!(
        text(&mut p, "docs:///..%2F..%2Fetc").await,
        r#"docs-path: path=String("../../etc")"#
    );
    let resp = p
        .request("resources/read", json!({"uri": "db://users/1%2F2"}))
        .await;
    assert_eq!(resp["error"]["code"], -32002, "{resp}");
}

#[tokio::test]
async fn completion_is_capped_at_100_with_truthful_totals_and_sees_the_context() {
    let mut p = peer(&server()).await;
    let resp = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "db://users/{id}"}, "argument": {"name": "id", "value": "1"}}),
        )
        .await;
    let c = &resp["result"]["completion"];
    // 1, 10-19, 100-199 = 111 matches.
    assert_eq!(c["values"].as_array().unwrap().len(), 100);
    assert_eq!(c["total"], 111);
    assert_eq!(c["hasMore"], true);
    let values: BTreeSet<&str> = c["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(values.iter().all(|v| v.starts_with('1')));

    let resp = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "db://users/{user}/posts/{post}"},
                   "argument": {"name": "post", "value": ""},
                   "context": {"arguments": {"user": "ada"}}}),
        )
        .await;
    assert_eq!(
        resp["result"]["completion"]["values"],
        json!(["ada-first", "ada-second"])
    );
    assert_eq!(resp["result"]["completion"]["hasMore"], false);

    // A variable without a handler completes to nothing; an unknown one is an error.
    let resp = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "db://users/{user}/posts/{post}"}, "argument": {"name": "user", "value": ""}}),
        )
        .await;
    assert_eq!(resp["result"]["completion"]["values"], json!([]));
    let resp = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "db://users/{id}"}, "argument": {"name": "nope", "value": ""}}),
        )
        .await;
    assert_eq!(resp["error"]["code"], -32602);
}

#[tokio::test]
async fn the_completions_capability_is_declared_whenever_a_template_is_served() {
    // Every template can be completed (with no values when nothing completes it), so a
    // provider that completes can never leave the capability undeclared.
    let plain = Server::builder("t", "0")
        .mount(
            "",
            ResourceSet::new().with_template(template("x:///{a}", "x")),
        )
        .build()
        .unwrap();
    let (r, w) = tokio::io::split(serve_in_memory(&plain, StreamConfig::default()));
    let mut with = Peer::new(r, w);
    let caps = with.initialize(ProtocolVersion::V2025_11_25).await["capabilities"].clone();
    assert!(caps.get("completions").is_some(), "{caps}");
    let resp = with
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "x:///{a}"}, "argument": {"name": "a", "value": ""}}),
        )
        .await;
    assert_eq!(resp["result"]["completion"]["values"], json!([]));

    let static_only = Server::builder("t", "0")
        .mount(
            "",
            ResourceSet::new().with_text(Resource::new("x:///a", "a"), "a"),
        )
        .build()
        .unwrap();
    let (r, w) = tokio::io::split(serve_in_memory(&static_only, StreamConfig::default()));
    let mut without = Peer::new(r, w);
    let caps = without.initialize(ProtocolVersion::V2025_11_25).await["capabilities"].clone();
    assert!(caps.get("completions").is_none(), "{caps}");
}

#[tokio::test]
async fn templates_are_listed_and_invalid_ones_refused_at_declaration() {
    let mut p = peer(&server()).await;
    let resp = p.request("resources/templates/list", json!({})).await;
    assert_eq!(
        resp["result"]["resourceTemplates"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    let err = TemplateResource::new(ResourceTemplate::new("x:///{unclosed", "bad"), echo("bad"))
        .unwrap_err();
    assert!(err.to_string().contains("byte"), "{err}");
    let err = template("x:///{a}", "x")
        .with_completion("b", |_| async { Ok(vec![]) })
        .unwrap_err();
    assert!(err.to_string().contains("\"b\""), "{err}");
}
