//! What `#[resources]` declares, on the wire: every attribute argument in the metadata,
//! typed parameters (parsed, optional, segments, renamed, `&str`, the request context),
//! doc comments as descriptions, completion with already chosen variables, list functions,
//! collections and the cache scope.
#![cfg(feature = "macros")]
// Owned parameter types are exercised on purpose: they are what the macro binds.
#![allow(clippy::needless_pass_by_value)]

mod common;

use rsrc::declare::{Child, Json, ListItem};
use rsrc::protocol::{ProtocolVersion, Resource};
use rsrc::{NotFound, RequestContext, ResourceError, Server, resources};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

struct Shop {
    items: Vec<(&'static str, u32, &'static str)>,
}

#[resources]
impl Shop {
    /// The shop's opening hours.
    ///
    /// Times are local.
    #[resource(
        uri = "shop://hours",
        title = "Opening hours",
        mime_type = "text/plain",
        size = 11,
        icon = "https://shop.example/clock.png",
        icon(src = "https://shop.example/clock-dark.png", mime_type = "image/png", sizes = ["48x48"], theme = "dark"),
        audience = ["user", "assistant"],
        priority = 0.8,
        last_modified = "2025-01-12T15:00:58Z"
    )]
    fn hours(&self) -> &'static str {
        "9:00-17:00\n"
    }

    #[resource(
        uri = "shop://items/{category}/{itemNo}",
        description = "One item",
        cache = "1m",
        cache_scope = "public"
    )]
    async fn item(&self, category: &str, item_no: u32) -> Result<Json<Value>, ResourceError> {
        let (_, no, name) = self
            .items
            .iter()
            .find(|(c, n, _)| *c == category && *n == item_no)
            .ok_or(NotFound)?;
        Ok(Json(
            json!({ "category": category, "no": no, "name": name }),
        ))
    }

    #[complete(item, itemNo)]
    fn item_numbers(&self, item_no: &str, category: Option<String>) -> Vec<String> {
        let numbers = self
            .items
            .iter()
            .filter(|(c, _, _)| category.as_deref().is_none_or(|k| k == *c));
        numbers
            .map(|(_, n, _)| n.to_string())
            .filter(|n| n.starts_with(item_no))
            .collect()
    }

    #[list(item)]
    fn all_items(&self) -> Vec<ListItem<ItemItem>> {
        let item = |(c, n, name): &(&str, u32, &str)| {
            ItemItem {
                category: c.to_string(),
                item_no: *n,
            }
            .title(*name)
        };
        self.items.iter().map(item).collect()
    }

    #[resource(uri = "shop://search{?q,max}")]
    fn search(
        &self,
        q: Option<String>,
        #[var("max")] limit: Option<usize>,
        ctx: &RequestContext,
    ) -> String {
        let hits = self
            .items
            .iter()
            .filter(|(_, _, n)| q.as_deref().is_none_or(|q| n.contains(q)));
        let names: Vec<&str> = hits
            .take(limit.unwrap_or(usize::MAX))
            .map(|(_, _, n)| *n)
            .collect();
        format!("{} ({})", names.join(", "), ctx.protocol_version())
    }

    #[resource(uri = "shop://shelves/{+path}")]
    fn shelf(&self, path: Vec<String>) -> String {
        path.join(" / ")
    }

    #[resource(uri = "shop://categories/{category}", collection)]
    fn category(&self, category: String) -> Option<Vec<Child>> {
        let items: Vec<Child> = self
            .items
            .iter()
            .filter(|(c, _, _)| *c == category)
            .map(|(c, n, name)| {
                Child::new(Resource::new(format!("shop://items/{c}/{n}"), *name))
                    .with(name.to_string())
            })
            .collect();
        (!items.is_empty()).then_some(items)
    }
}

fn server() -> Server {
    let shop = Shop {
        items: vec![
            ("tea", 1, "Assam"),
            ("tea", 12, "Darjeeling"),
            ("cups", 2, "Mug"),
        ],
    };
    Server::builder("shop", "1")
        .mount("shop:", shop)
        .build()
        .unwrap()
}

async fn peer(v: ProtocolVersion) -> Peer {
    common::connect_as(&server(), v).await
}

#[tokio::test]
async fn attribute_arguments_and_doc_comments_become_metadata() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let meta = p
        .request("resources/metadata", json!({"uri": "shop://hours"}))
        .await;
    let r = &meta["result"]["resource"];
    assert_eq!(r["name"], "hours", "the method's name by default");
    assert_eq!(r["title"], "Opening hours");
    assert_eq!(
        r["description"],
        "The shop's opening hours.\n\nTimes are local."
    );
    assert_eq!(r["mimeType"], "text/plain");
    assert_eq!(r["size"], 11);
    assert_eq!(
        r["icons"][0],
        json!({"src": "https://shop.example/clock.png"})
    );
    assert_eq!(
        r["icons"][1],
        json!({"src": "https://shop.example/clock-dark.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"})
    );
    assert_eq!(
        r["annotations"],
        json!({"audience": ["user", "assistant"], "priority": 0.8, "lastModified": "2025-01-12T15:00:58Z"})
    );
    let templates = p.request("resources/templates/list", json!({})).await;
    let item = &templates["result"]["resourceTemplates"][0];
    assert_eq!(item["uriTemplate"], "shop://items/{category}/{itemNo}");
    assert_eq!(item["description"], "One item");
    assert_eq!(item["mimeType"], "application/json", "implied by Json<T>");
}

#[tokio::test]
async fn typed_parameters_parse_or_the_resource_is_not_found() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let ok = common::read(&mut p, "shop://items/tea/12").await;
    assert_eq!(
        ok["result"]["contents"][0]["text"],
        r#"{"category":"tea","name":"Darjeeling","no":12}"#
    );
    for uri in ["shop://items/tea/twelve", "shop://items/tea/99"] {
        let r = common::read(&mut p, uri).await;
        assert_eq!(r["error"]["code"], -32002, "{r}");
        assert_eq!(r["error"]["data"]["uri"], uri);
    }
}

#[tokio::test]
async fn optional_renamed_and_context_parameters_are_bound() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let r = common::read(&mut p, "shop://search?q=a&max=1").await;
    assert_eq!(r["result"]["contents"][0]["text"], "Assam (2025-11-25)");
    let r = common::read(&mut p, "shop://search").await;
    assert_eq!(
        r["result"]["contents"][0]["text"],
        "Assam, Darjeeling, Mug (2025-11-25)"
    );
}

#[tokio::test]
async fn segment_parameters_refuse_dot_segments() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let r = common::read(&mut p, "shop://shelves/back/top").await;
    assert_eq!(r["result"]["contents"][0]["text"], "back / top");
    let r = common::read(&mut p, "shop://shelves/back/../office").await;
    assert_eq!(r["error"]["code"], -32002);
}

#[tokio::test]
async fn completion_sees_the_variables_already_chosen() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let complete = |value: &str, context: Value| {
        json!({"ref": {"type": "ref/resource", "uri": "shop://items/{category}/{itemNo}"},
               "argument": {"name": "itemNo", "value": value}, "context": {"arguments": context}})
    };
    let r = p
        .request("completion/complete", complete("1", json!({})))
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["1", "12"]));
    let r = p
        .request(
            "completion/complete",
            complete("", json!({"category": "cups"})),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["2"]));
}

#[tokio::test]
async fn list_functions_name_every_variable() {
    let mut p = peer(ProtocolVersion::V2025_11_25).await;
    let r = p.request("resources/list", json!({})).await;
    let uris = common::listed_uris(&r);
    assert_eq!(
        uris,
        [
            "shop://hours",
            "shop://items/cups/2",
            "shop://items/tea/1",
            "shop://items/tea/12"
        ]
    );
}

#[tokio::test]
async fn a_collection_method_returns_children() {
    let mut p = peer(ProtocolVersion::V2026_07_28).await;
    let r = p
        .modern("resources/list", json!({"uri": "shop://categories/tea"}))
        .await;
    assert_eq!(r["result"]["resources"].as_array().unwrap().len(), 2);
    let r = p
        .modern("resources/read", json!({"uri": "shop://categories/tea"}))
        .await;
    assert_eq!(r["result"]["contents"][1]["text"], "Darjeeling");
    let r = p
        .modern("resources/read", json!({"uri": "shop://categories/books"}))
        .await;
    assert_eq!(r["error"]["data"]["uri"], "shop://categories/books");
}

#[tokio::test]
async fn a_public_cache_scope_reaches_2026_results() {
    let mut p = peer(ProtocolVersion::V2026_07_28).await;
    let r = p
        .modern("resources/read", json!({"uri": "shop://items/tea/1"}))
        .await;
    assert_eq!(r["result"]["cacheScope"], "public");
    assert_eq!(r["result"]["ttlMs"], 60_000);
}
