//! Shared fixtures: temporary trees served by the filesystem provider, and a raw-JSON
//! peer (every server message schema-validated) connected in memory.
#![allow(dead_code, unreachable_pub)]

use std::path::Path;

use rsrc::protocol::ProtocolVersion;
use rsrc::transport::{StreamConfig, serve_in_memory};
use rsrc::{Server, ServerConfig};
use rsrc_providers::fs::{FsConfig, FsProvider, PREFIX};
use rsrc_testkit::Peer;
use serde_json::{Value, json};

pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

pub fn server_for(provider: FsProvider, page_size: usize) -> Server {
    server_at(PREFIX, provider, page_size)
}

/// A server with `provider` mounted at `prefix`, listing `page_size` resources a page.
pub fn server_at<P: rsrc::Provider>(prefix: &str, provider: P, page_size: usize) -> Server {
    Server::builder("provider-test", "0")
        .mount(prefix, provider)
        .config(ServerConfig {
            page_size,
            ..ServerConfig::default()
        })
        .build()
        .unwrap()
}

pub async fn peer_for(server: &Server) -> Peer {
    let (r, w) = tokio::io::split(serve_in_memory(server, StreamConfig::default()));
    let mut peer = Peer::new(r, w);
    peer.initialize(ProtocolVersion::V2025_11_25).await;
    peer
}

pub async fn serve_dir(root: &Path) -> Peer {
    serve_dir_with(root, FsConfig::default(), 1000).await
}

pub async fn serve_dir_with(root: &Path, config: FsConfig, page_size: usize) -> Peer {
    let provider = FsProvider::single(root, config).unwrap();
    peer_for(&server_for(provider, page_size)).await
}

pub async fn read(peer: &mut Peer, uri: &str) -> Value {
    peer.request("resources/read", json!({"uri": uri})).await
}

pub fn is_not_found(resp: &Value, uri: &str) -> bool {
    resp["error"]["code"] == -32002 && resp["error"]["data"]["uri"] == uri
}

/// Every URI of a complete walk of `resources/list` (with `params`).
pub async fn walk(peer: &mut Peer, params: Value) -> Vec<String> {
    let mut uris = Vec::new();
    let mut params = params;
    loop {
        let resp = peer.request("resources/list", params.clone()).await;
        let result = &resp["result"];
        for r in result["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{resp}"))
        {
            uris.push(r["uri"].as_str().unwrap().to_owned());
        }
        match result.get("nextCursor") {
            Some(c) => params["cursor"] = c.clone(),
            None => return uris,
        }
    }
}

/// The URIs of the `resources/updated` notifications among `msgs`, sorted.
pub fn updates(msgs: &[Value]) -> Vec<String> {
    let mut u: Vec<String> = msgs
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .map(|m| m["params"]["uri"].as_str().unwrap().to_owned())
        .collect();
    u.sort();
    u
}

/// How many `resources/list_changed` notifications are among `msgs`.
pub fn list_changes(msgs: &[Value]) -> usize {
    msgs.iter()
        .filter(|m| m["method"] == "notifications/resources/list_changed")
        .count()
}

/// Every URI `search_resources` (the tools bridge) finds for `query`, following its
/// cursors to the end.
pub async fn search_all(peer: &mut rsrc_testkit::Peer, query: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"query": query});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let resp = peer
            .call(
                "tools/call",
                json!({"name": "search_resources", "arguments": args}),
            )
            .await;
        let result = &resp["result"];
        assert_eq!(result["isError"], Value::Null, "{resp}");
        for r in result["structuredContent"]["resources"].as_array().unwrap() {
            found.push(r["uri"].as_str().unwrap().to_owned());
        }
        cursor = result["structuredContent"]["nextCursor"]
            .as_str()
            .map(str::to_owned);
        if cursor.is_none() {
            return found;
        }
    }
}
