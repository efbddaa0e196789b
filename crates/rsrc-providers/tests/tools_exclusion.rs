//! A source kept out of the tools (`ToolsConfig::excluded`, `tools = false` in a
//! configuration file) stays out however a URI spells it: percent-encoded letters, the
//! scheme or authority in capitals, dot segments, an encoded `/`. Each provider resolves
//! such spellings itself (it decodes each segment once), so for each one the resource
//! methods are asked first, to show that a spelling reaches the resource, and then every
//! tool: `read_resource` and `list_resources` answer as for a missing resource, and
//! neither a listing nor a search names anything inside the source.
#![cfg(all(
    feature = "fs",
    feature = "sqlite",
    feature = "git",
    feature = "skills"
))]

mod common;
#[path = "common/gitrepo.rs"]
mod gitrepo;
#[path = "common/sqlite.rs"]
mod sqlite_common;

use rsrc::protocol::ProtocolVersion;
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc::{Server, ServerBuilder, ToolsConfig};
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider, SqliteSource};
use rsrc_providers::fs::{FsConfig, FsProvider};
use rsrc_providers::git::{GitConfig, GitProvider};
use rsrc_providers::skills::{SkillsConfig, SkillsProvider};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::write;
use gitrepo::{Fixture, Item};

async fn peer(server: &Server) -> Peer {
    let (r, w) = tokio::io::split(serve_in_memory(server, StreamConfig::default()));
    let mut peer = Peer::new(r, w);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer
}

fn with_tools(builder: ServerBuilder, excluded: &[&str]) -> Server {
    builder
        .tools(ToolsConfig {
            excluded: excluded.iter().map(|s| (*s).to_owned()).collect(),
            ..ToolsConfig::default()
        })
        .build()
        .unwrap()
}

async fn tool(peer: &mut Peer, name: &str, arguments: Value) -> Value {
    let r = peer
        .call("tools/call", json!({"name": name, "arguments": arguments}))
        .await;
    r["result"].clone()
}

/// Every URI the tools list (all pages, from the top) and find for `query`.
async fn everything_the_tools_name(peer: &mut Peer, query: &str) -> Vec<String> {
    let mut uris = Vec::new();
    for (name, mut args) in [
        ("list_resources", json!({})),
        ("search_resources", json!({"query": query})),
    ] {
        for _ in 0..100 {
            let page = tool(peer, name, args.clone()).await;
            assert_ne!(page["isError"], true, "{name}: {page}");
            let content = &page["structuredContent"];
            for r in content["resources"].as_array().unwrap() {
                uris.push(r["uri"].as_str().unwrap().to_owned());
            }
            match content["nextCursor"].as_str() {
                Some(c) => args["cursor"] = json!(c),
                None => break,
            }
        }
    }
    uris
}

/// `spellings` (each of which the resource methods resolve to a resource when `reaches`
/// says so) are refused by the tools as missing resources, and nothing the tools list or
/// find for `query` starts with `inside`.
async fn kept_out(peer: &mut Peer, spellings: &[(&str, bool)], inside: &str, query: &str) {
    for &(uri, reaches) in spellings {
        if reaches {
            let direct = peer.call("resources/read", json!({"uri": uri})).await;
            assert!(
                direct["result"]["contents"].is_array(),
                "the resource method serves {uri}: {direct}"
            );
        }
        for name in ["read_resource", "list_resources"] {
            let r = tool(peer, name, json!({"uri": uri})).await;
            assert_eq!(r["isError"], true, "{name} {uri}: {r}");
            let text = r["content"][0]["text"].as_str().unwrap();
            assert!(
                text.contains("not found") || text.contains("Resource not found"),
                "{name} {uri} answers as a missing resource: {text}"
            );
        }
    }
    let named = everything_the_tools_name(peer, query).await;
    assert!(!named.is_empty(), "the tools still offer the other sources");
    assert!(
        named.iter().all(|u| !u.starts_with(inside)),
        "nothing of {inside}: {named:?}"
    );
}

#[tokio::test]
async fn a_directory_kept_out_of_the_tools_stays_out_in_every_spelling() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "secret/key.txt", "the key");
    write(dir.path(), "open/key.txt", "nothing");
    let fs = FsProvider::new(
        vec![
            ("secret".into(), dir.path().join("secret")),
            ("open".into(), dir.path().join("open")),
        ],
        FsConfig {
            watch: false,
            ..FsConfig::default()
        },
    )
    .unwrap();
    let server = with_tools(
        Server::builder("t", "0").mount("file:///", fs),
        &["file:///secret"],
    );
    let mut peer = peer(&server).await;
    kept_out(
        &mut peer,
        &[
            ("file:///%73ecret/key.txt", true),
            ("file:///secre%74/key.txt", true),
            ("file:///%73%65%63%72%65%74/", true),
            ("file:///%73ecret", true),
            ("file:///secret/%6Bey.txt", true),
            ("FILE:///secret/key.txt", false),
            ("file:///open/../secret/key.txt", false),
            ("file:///open/%2E%2E/%73ecret/key.txt", false),
            ("file:///./secret/key.txt", false),
            ("file:///%73ecret%2Fkey.txt", false),
        ],
        "file:///secret",
        "key",
    )
    .await;
}

#[tokio::test]
async fn a_database_kept_out_of_the_tools_stays_out_in_every_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);
               INSERT INTO items VALUES (1, 'shop key');";
    let shop = sqlite_common::create_db(dir.path(), "shop.db", sql);
    let other = sqlite_common::create_db(dir.path(), "other.db", sql);
    let db = SqliteProvider::new(
        vec![
            SqliteSource::named_file("shop", shop),
            SqliteSource::named_file("other", other),
        ],
        SqliteConfig {
            watch: false,
            ..SqliteConfig::default()
        },
    )
    .unwrap();
    let server = with_tools(Server::builder("t", "0").mount("db://", db), &["db://shop"]);
    let mut peer = peer(&server).await;
    kept_out(
        &mut peer,
        &[
            ("db://%73hop/items/1", true),
            ("db://sh%6Fp/items/1", true),
            ("db://%73hop/items", true),
            ("db://%73hop", true),
            ("db://shop/%69tems/1", true),
            ("DB://SHOP/items/1", false),
            ("db://Shop/items/1", false),
            ("db://%73hop/items/%2E%2E/items/1", false),
        ],
        "db://shop",
        "items",
    )
    .await;
}

#[tokio::test]
async fn a_repository_kept_out_of_the_tools_stays_out_in_every_spelling() {
    let secret = Fixture::new();
    secret.commit("main", "c", &[Item::File("key.txt", b"the key")]);
    let open = Fixture::new();
    open.commit("main", "c", &[Item::File("key.txt", b"nothing")]);
    let quiet = || GitConfig {
        poll_interval: None,
        ..GitConfig::default()
    };
    let app = GitProvider::open_named("app", secret.path(), quiet()).unwrap();
    let web = GitProvider::open_named("web", open.path(), quiet()).unwrap();
    let excluded = app.prefix().to_owned();
    let builder = Server::builder("t", "0")
        .mount(app.prefix().to_owned(), app)
        .mount(web.prefix().to_owned(), web);
    let server = with_tools(builder, &[&excluded]);
    let mut peer = peer(&server).await;
    kept_out(
        &mut peer,
        &[
            ("git://app/main/%6Bey.txt", true),
            ("git://app/%6Dain/key.txt", true),
            ("git://%61pp/main/key.txt", false),
            ("GIT://APP/main/key.txt", false),
            ("git://web/main/../../app/main/key.txt", false),
        ],
        &excluded,
        "key",
    )
    .await;
}

#[tokio::test]
async fn skills_kept_out_of_the_tools_stay_out_in_every_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let md = |name: &str| format!("---\nname: {name}\ndescription: keys\n---\n# {name}\n");
    write(dir.path(), "team/vault/SKILL.md", md("vault"));
    write(dir.path(), "team/vault/key.txt", "the key");
    write(dir.path(), "mine/notes/SKILL.md", md("notes"));
    let skills = SkillsProvider::new(
        vec![
            (Some("team".into()), dir.path().join("team")),
            (Some("mine".into()), dir.path().join("mine")),
        ],
        SkillsConfig {
            poll_interval: None,
            ..SkillsConfig::default()
        },
    )
    .unwrap();
    let server = with_tools(
        skills.install(Server::builder("t", "0")),
        &["skill://team/"],
    );
    let mut peer = peer(&server).await;
    kept_out(
        &mut peer,
        &[
            ("skill://team/vault/key.txt", true),
            ("skill://team/vault/%6Bey.txt", false),
            ("skill://team/%76ault/key.txt", false),
            ("skill://%74eam/vault/key.txt", false),
            ("SKILL://TEAM/vault/key.txt", false),
            ("skill://mine/../team/vault/key.txt", false),
            ("skill://team", false),
        ],
        "skill://team/",
        "key",
    )
    .await;
}
