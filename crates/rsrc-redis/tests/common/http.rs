//! The Streamable HTTP tests' harness: a server with static, templated and cancellable
//! resources on a real loopback socket, stopped when its handle is dropped.
#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rsrc::protocol::{ProtocolVersion, Resource, ResourceTemplate};
use rsrc::{Representation, RequestContext, Server, TemplateResource};
use rsrc_http::{HttpConfig, serve_http};
use rsrc_testkit::HttpPeer;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// A running server; dropping it shuts the server down.
pub struct Running {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    pub fn peer(&self) -> HttpPeer {
        HttpPeer::new(self.addr)
    }

    /// Starts the shutdown and returns when `serve_http` returned.
    pub async fn shut_down(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.done.take().unwrap().await.unwrap().unwrap();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Set by the `cancel:///watch` resource when its request is cancelled.
pub static CANCELLED: AtomicBool = AtomicBool::new(false);

pub fn test_server() -> Server {
    let echo = TemplateResource::new(
        ResourceTemplate::new("echo:///{word}", "echo"),
        |_ctx: RequestContext, vars| async move {
            Ok(vec![Representation::text(
                vars.str("word").unwrap_or_default().to_owned(),
            )])
        },
    )
    .unwrap();
    let watch = rsrc::ResourceSet::new().with_dynamic(
        Resource::new("cancel:///watch", "watch"),
        |ctx: RequestContext| async move {
            // Work handed elsewhere learns of the cancellation through the context.
            let watcher = ctx.clone();
            tokio::spawn(async move {
                watcher.cancelled().await;
                CANCELLED.store(true, Ordering::SeqCst);
            });
            ctx.report_progress(1.0, None, Some("started"));
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(vec![Representation::text("too late")])
        },
    );
    Server::builder("rsrc-http-test", "0.0.0")
        .mount("sample:", crate::common::sample_set())
        .mount("echo:", rsrc::ResourceSet::new().with_template(echo))
        .mount("cancel:", watch)
        .build()
        .unwrap()
}

pub async fn start(config: HttpConfig) -> Running {
    start_with(test_server(), config).await
}

pub async fn start_with(server: Server, config: HttpConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel();
    let done = tokio::spawn(async move {
        serve_http(&server, listener, config, async {
            let _ = rx.await;
        })
        .await
    });
    Running {
        addr,
        stop: Some(tx),
        done: Some(done),
    }
}

pub fn read(peer: &mut HttpPeer, uri: &str) -> Value {
    let id = peer.next_id();
    if peer.revision().is_modern() {
        let mut m = peer.modern_request("resources/read", json!({ "uri": uri }));
        m["id"] = json!(id);
        m
    } else {
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
    }
}

pub fn standard(host: &str) -> Vec<(&str, &str)> {
    vec![
        ("host", host),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ]
}

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// A peer speaking 2026-07-28 to `srv`.
pub fn modern(srv: &Running) -> HttpPeer {
    let mut p = srv.peer();
    p.speak(ProtocolVersion::V2026_07_28);
    p
}

/// A server with one subscribable resource, `w:///a`.
pub fn watched() -> Server {
    Server::builder("rsrc-http-subs", "0.0.0")
        .mount(
            "w:",
            rsrc::ResourceSet::new()
                .with_text(Resource::new("w:///a", "a"), "A")
                .with_subscriptions(),
        )
        .build()
        .unwrap()
}
