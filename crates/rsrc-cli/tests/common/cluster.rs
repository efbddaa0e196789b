//! A cluster started by `scripts/cluster` for the cluster tests and benchmark: three
//! `rsrc serve --http` instances (each with an admin listener) behind HAProxy with a
//! Redis bus, on free loopback ports, serving a fresh directory and SQLite database;
//! stopped on drop.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::{HttpPeer, SseStream};
use serde_json::{Value, json};

/// A running cluster, stopped on drop.
pub struct Cluster {
    _dir: tempfile::TempDir,
    pub state: PathBuf,
    pub docs: PathBuf,
    pub db: PathBuf,
    pub balancer: SocketAddr,
    pub instances: Vec<SocketAddr>,
    /// Each instance's admin listener (`/metrics`, `/readyz`).
    pub admins: Vec<SocketAddr>,
    pub pids: Vec<u32>,
    pub redis_port: u16,
}

/// Runs `scripts/cluster` with `args`; its standard output.
pub fn script(args: &[&str]) -> String {
    script_with(args, "--db-poll 100ms --watch-window 20ms")
}

/// Runs `scripts/cluster` with `args`, giving every instance the flags `extra`.
pub fn script_with(args: &[&str], extra: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(root.join("scripts/cluster"))
        .args(args)
        .env("RSRC_BIN", env!("CARGO_BIN_EXE_rsrc"))
        .env("RSRC_CLUSTER_ARGS", extra)
        .output()
        .expect("scripts/cluster runs");
    assert!(
        out.status.success(),
        "scripts/cluster {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

impl Cluster {
    /// A cluster serving a directory (with `files` files under `many/`) and a SQLite
    /// database with a table `items`.
    pub fn start(files: usize) -> Cluster {
        Cluster::start_with(files, "--db-poll 100ms --watch-window 20ms")
    }

    /// As [`Cluster::start`], every instance also given the flags `extra`.
    pub fn start_with(files: usize, extra: &str) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(docs.join("many")).unwrap();
        std::fs::write(docs.join("a.txt"), "first").unwrap();
        for i in 0..files {
            std::fs::write(docs.join(format!("many/{i:05}.txt")), "x").unwrap();
        }
        let db = dir.path().join("shop.db");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO items VALUES (1, 'one'), (2, 'two');",
        )
        .unwrap();
        let state = dir.path().join("state");
        let env: HashMap<String, String> = script_with(
            &[
                "start",
                state.to_str().unwrap(),
                docs.to_str().unwrap(),
                db.to_str().unwrap(),
            ],
            extra,
        )
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect();
        let url = &env["RSRC_CLUSTER_URL"];
        let balancer = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap();
        let instances = env["RSRC_CLUSTER_PORTS"]
            .split(' ')
            .map(|p| SocketAddr::from(([127, 0, 0, 1], p.parse().unwrap())))
            .collect();
        let admins = env["RSRC_CLUSTER_ADMIN_PORTS"]
            .split(' ')
            .map(|p| SocketAddr::from(([127, 0, 0, 1], p.parse().unwrap())))
            .collect();
        let pids = env["RSRC_CLUSTER_PIDS"]
            .split(' ')
            .map(|p| p.parse().unwrap())
            .collect();
        Cluster {
            state,
            docs,
            db,
            balancer,
            instances,
            admins,
            pids,
            redis_port: env["RSRC_CLUSTER_REDIS_PORT"].parse().unwrap(),
            _dir: dir,
        }
    }

    pub fn peer(&self, addr: SocketAddr) -> HttpPeer {
        let mut p = HttpPeer::new(addr);
        p.speak(ProtocolVersion::V2026_07_28);
        p
    }

    /// A 2026-07-28 request to `addr` (one fresh connection: the balancer picks anew).
    pub async fn call(&self, addr: SocketAddr, method: &str, params: Value) -> Value {
        let mut p = self.peer(addr);
        let msg = p.modern_request(method, params);
        let res = p.post(&msg).await;
        assert_eq!(res.status, 200, "{method}: {:?}", res.messages);
        res.json().clone()
    }

    /// A `subscriptions/listen` stream through `addr`, acknowledged.
    pub async fn listen(&self, addr: SocketAddr, uris: &[&str]) -> SseStream {
        let mut p = self.peer(addr);
        let msg = p.modern_request(
            "subscriptions/listen",
            json!({"notifications": {"resourcesListChanged": true, "resourceSubscriptions": uris}}),
        );
        let h = p.headers_for(&msg);
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut s = p.open("POST", &h, msg.to_string().as_bytes()).await;
        assert_eq!(s.status, 200);
        let ack = s.next_event(Duration::from_secs(5)).await.expect("ack");
        assert!(
            ack.data
                .contains("notifications/subscriptions/acknowledged"),
            "{ack:?}"
        );
        s
    }

    /// Who holds lease `name` (an instance's `PID-RANDOM`), if anyone.
    pub fn holder(&self, name: &str) -> Option<u32> {
        let out = Command::new("redis-cli")
            .args([
                "-p",
                &self.redis_port.to_string(),
                "GET",
                &format!("rsrc:lease:{name}"),
            ])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.trim().split('-').next()?.parse().ok()
    }

    /// The holder of lease `name`, once someone holds it.
    pub async fn lease_holder(&self, name: &str) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(pid) = self.holder(name) {
                return pid;
            }
            assert!(Instant::now() < deadline, "nobody holds {name}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn kill(&self, pid: u32) {
        let n = self.pids.iter().position(|&p| p == pid).unwrap() + 1;
        script(&["kill", self.state.to_str().unwrap(), &n.to_string()]);
    }

    /// Sends SIGTERM to the instance with `pid`: it drains, then stops.
    pub fn term(&self, pid: u32) {
        let n = self.pids.iter().position(|&p| p == pid).unwrap() + 1;
        script(&["term", self.state.to_str().unwrap(), &n.to_string()]);
    }

    /// The exposition of an instance's `/metrics`, through its admin listener.
    pub async fn scrape(&self, admin: SocketAddr) -> String {
        reqwest::get(format!("http://{admin}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    pub fn commit(&self, sql: &str) {
        rusqlite::Connection::open(&self.db)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/cluster"))
            .args(["stop", self.state.to_str().unwrap()])
            .output();
    }
}
