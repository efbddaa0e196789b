//! SEP-2093 as rsrc's declared extension (`dev.rsrc/resource-metadata`), over raw JSON in
//! every revision: declared where each era declares an extension while it is served; with
//! the switch off (`ServerConfig::resource_metadata`), nothing declared and exactly the
//! standard shapes served. Every message is also checked against its revision's official
//! schema by the test peer.

mod common;

use rsrc::protocol::ProtocolVersion;
use rsrc::{Server, ServerConfig};
use serde_json::{Value, json};

use common::{connect, connect_as, listed_uris, read, server, server_with};

const ID: &str = "dev.rsrc/resource-metadata";

fn settings() -> Value {
    json!({"sep": 2093, "features": ["readMetadata", "resourceTypes", "metadataMethod", "scopedList"]})
}

fn standard_server() -> Server {
    server_with(ServerConfig {
        resource_metadata: false,
        ..ServerConfig::default()
    })
}

/// The capabilities a client speaking `v` is told of: `initialize`'s in 2025,
/// `server/discover`'s in 2026-07-28.
async fn capabilities(server: &Server, v: ProtocolVersion) -> Value {
    let mut peer = connect(server);
    if v.is_modern() {
        peer.speak(v);
        peer.modern("server/discover", json!({})).await["result"]["capabilities"].clone()
    } else {
        peer.initialize(v).await["capabilities"].clone()
    }
}

/// The member names an official schema gives a definition (`Resource`, …).
fn schema_members(v: ProtocolVersion, def: &str) -> Vec<String> {
    let path = format!(
        "{}/../../testdata/schema/{}.schema.json",
        env!("CARGO_MANIFEST_DIR"),
        v.as_str()
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .unwrap();
    defs[def]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{v} has no {def}"))
        .keys()
        .cloned()
        .collect()
}

/// Fails if `item` has a member its revision's definition `def` does not name.
fn only_standard_members(v: ProtocolVersion, def: &str, item: &Value) {
    let known = schema_members(v, def);
    for key in item.as_object().unwrap().keys() {
        assert!(known.contains(key), "{v}: {def} has no {key:?}: {item}");
    }
}

#[tokio::test]
async fn the_extension_is_declared_under_extensions_in_2026_and_experimental_in_2025() {
    let server = server();
    for v in ProtocolVersion::ALL {
        let caps = capabilities(&server, v).await;
        if v.is_modern() {
            assert_eq!(caps["extensions"][ID], settings(), "{v}: {caps}");
            assert!(caps.get("experimental").is_none(), "{v}: {caps}");
        } else {
            assert_eq!(caps["experimental"][ID], settings(), "{v}: {caps}");
            assert!(caps.get("extensions").is_none(), "{v}: {caps}");
        }
    }
}

#[tokio::test]
async fn with_the_switch_off_no_extension_is_declared() {
    let server = standard_server();
    for v in ProtocolVersion::ALL {
        let caps = capabilities(&server, v).await;
        assert!(caps.get("extensions").is_none(), "{v}: {caps}");
        assert!(caps.get("experimental").is_none(), "{v}: {caps}");
        // What is standard is still declared.
        assert!(caps["resources"].is_object(), "{v}: {caps}");
    }
    // The builder's method is the same switch.
    let built = Server::builder("t", "0")
        .mount("sample:", common::sample_set())
        .resource_metadata(false)
        .build()
        .unwrap();
    let caps = capabilities(&built, ProtocolVersion::V2026_07_28).await;
    assert!(caps.get("extensions").is_none(), "{caps}");
}

#[tokio::test]
async fn with_the_switch_off_resources_metadata_is_an_unknown_method() {
    let server = standard_server();
    for v in ProtocolVersion::ALL {
        let mut peer = connect_as(&server, v).await;
        let resp = peer
            .call("resources/metadata", json!({"uri": "sample:///README.md"}))
            .await;
        assert_eq!(resp["error"]["code"], -32601, "{v}: {resp}");
        // Worded like any method the server does not know.
        let unknown = peer
            .call("resources/nothing", json!({"uri": "sample:///README.md"}))
            .await;
        assert_eq!(
            resp["error"]["message"].as_str().unwrap(),
            unknown["error"]["message"]
                .as_str()
                .unwrap()
                .replace("resources/nothing", "resources/metadata"),
            "{v}"
        );
        assert!(resp["error"].get("data").is_none(), "{v}: {resp}");
    }
    // With the switch on, the method answers.
    let mut peer = connect_as(
        &server_with(ServerConfig::default()),
        ProtocolVersion::V2025_11_25,
    )
    .await;
    let resp = peer
        .call("resources/metadata", json!({"uri": "sample:///README.md"}))
        .await;
    assert_eq!(
        resp["result"]["resource"]["resourceType"], "document",
        "{resp}"
    );
}

#[tokio::test]
async fn with_the_switch_off_a_uri_on_resources_list_is_ignored() {
    let server = standard_server();
    for v in ProtocolVersion::ALL {
        let mut peer = connect_as(&server, v).await;
        let all = peer.call("resources/list", json!({})).await;
        let scoped = peer
            .call("resources/list", json!({"uri": "sample:///guide"}))
            .await;
        assert_eq!(listed_uris(&scoped), listed_uris(&all), "{v}: {scoped}");
        assert!(listed_uris(&all).contains(&"sample:///README.md"), "{v}");
        // Even a URI no provider serves is ignored, as an unknown param is.
        let nowhere = peer
            .call("resources/list", json!({"uri": "nowhere:///x"}))
            .await;
        assert_eq!(listed_uris(&nowhere), listed_uris(&all), "{v}: {nowhere}");
    }
    // With the switch on, the same request lists the collection's children.
    let mut peer = connect_as(
        &server_with(ServerConfig::default()),
        ProtocolVersion::V2025_11_25,
    )
    .await;
    let scoped = peer
        .call("resources/list", json!({"uri": "sample:///guide"}))
        .await;
    assert!(
        !listed_uris(&scoped).contains(&"sample:///README.md"),
        "{scoped}"
    );
}

#[tokio::test]
async fn with_the_switch_off_results_carry_no_sep_2093_members() {
    let server = standard_server();
    for v in ProtocolVersion::ALL {
        let mut peer = connect_as(&server, v).await;
        let list = peer.call("resources/list", json!({})).await;
        let resources = list["result"]["resources"].as_array().unwrap();
        assert!(resources.len() > 5, "{v}: {list}");
        for r in resources {
            only_standard_members(v, "Resource", r);
        }
        // A document, a blob, format alternatives, a collection's children.
        for uri in [
            "sample:///README.md",
            "sample:///logo.png",
            "sample:///report.pdf",
            "sample:///guide",
        ] {
            let resp = read(&mut peer, uri).await;
            let contents = resp["result"]["contents"].as_array().unwrap();
            assert!(!contents.is_empty(), "{v} {uri}: {resp}");
            for c in contents {
                let def = if c.get("text").is_some() {
                    "TextResourceContents"
                } else {
                    "BlobResourceContents"
                };
                only_standard_members(v, def, c);
            }
        }
        let templates = peer.call("resources/templates/list", json!({})).await;
        for t in templates["result"]["resourceTemplates"].as_array().unwrap() {
            only_standard_members(v, "ResourceTemplate", t);
        }
        // The skills extension's directory read answers resources as a listing does.
        let dir = peer
            .call(
                "resources/directory/read",
                json!({"uri": "sample:///guide"}),
            )
            .await;
        let children = dir["result"]["resources"].as_array().unwrap();
        assert!(!children.is_empty(), "{v}: {dir}");
        for r in children {
            only_standard_members(v, "Resource", r);
        }
    }
}

#[tokio::test]
async fn with_the_switch_on_results_carry_the_extensions_members() {
    let mut peer = connect_as(&server(), ProtocolVersion::V2026_07_28).await;
    let list = peer.call("resources/list", json!({})).await;
    let guide = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "sample:///guide")
        .unwrap();
    assert_eq!(guide["resourceType"], "collection");
    assert_eq!(guide["capabilities"]["list"], true);
    let resp = read(&mut peer, "sample:///README.md").await;
    let c = &resp["result"]["contents"][0];
    assert_eq!(
        (&c["name"], &c["title"]),
        (&json!("README.md"), &json!("Read me"))
    );
    assert_eq!(c["resourceType"], "document");
}

#[test]
fn an_application_cannot_declare_the_engines_extension() {
    for built in [
        Server::builder("t", "0").extension(ID, json!({})).build(),
        Server::builder("t", "0")
            .capability("experimental", json!({ ID: {} }))
            .build(),
    ] {
        assert_eq!(
            built.unwrap_err(),
            rsrc::BuildError::ReservedCapability(ID.into())
        );
    }
}
