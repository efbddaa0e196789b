//! The rmcp reference server over stdio, spoken to in raw JSON: what the benchmark relies
//! on (a complete listing in pages, text and blob reads, the template, errors) holds.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// A running server and the lines it writes.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl Server {
    fn start(root: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-bench-rmcp"))
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            lines,
            next: 1,
        };
        let init = server.ask(
            "initialize",
            &json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        assert!(init["result"]["capabilities"]["resources"].is_object());
        writeln!(
            server.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        server
    }

    /// Sends a request and waits (at most 30 s) for the message that answers it.
    fn ask(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next;
        self.next += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("an answer within 30 s");
            let message: Value = serde_json::from_str(&line).expect("stdout carries JSON only");
            if message["id"] == id {
                return message;
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_reference_server_lists_reads_and_refuses_as_the_benchmark_expects() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("many")).unwrap();
    for i in 0..1_100 {
        std::fs::write(
            root.join(format!("many/f{i:04}.txt")),
            format!("file {i}\n"),
        )
        .unwrap();
    }
    std::fs::write(root.join("a.txt"), "hello \"a\"\n").unwrap();
    std::fs::write(root.join("blob.bin"), [0u8, 1, 2, 255]).unwrap();
    let mut server = Server::start(root);

    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = server.ask("resources/list", &params);
        pages += 1;
        for resource in page["result"]["resources"].as_array().unwrap() {
            listed.push(resource["uri"].as_str().unwrap().to_owned());
        }
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(listed.len(), 1_102);
    assert!(pages > 1, "1,102 files are listed in pages");
    assert!(listed.contains(&"file:///many/f0042.txt".to_owned()));

    let text = server.ask("resources/read", &json!({"uri": "file:///a.txt"}));
    assert_eq!(text["result"]["contents"][0]["text"], "hello \"a\"\n");
    let blob = server.ask("resources/read", &json!({"uri": "file:///blob.bin"}));
    assert_eq!(blob["result"]["contents"][0]["blob"], "AAEC/w==");
    let templates = server.ask("resources/templates/list", &json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "file:///{+path}"
    );

    let unknown = server.ask("resources/read", &json!({"uri": "file:///nothing.txt"}));
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
    let escape = server.ask("resources/read", &json!({"uri": "file:///../etc/passwd"}));
    assert!(escape["error"]["code"].is_i64(), "{escape}");
}
