//! `rsrc ui`'s backend, end to end over loopback: the URL on stdout, the token (query,
//! then cookie), the Host, Origin and fetch-site checks, the security headers, and the
//! shapes of the API (listing, reading with Markdown rendered and sanitised, raw contents
//! served inert, errors with the server's code, templates, completion, search, bundles).
//! The page itself is tested in Chromium (`tests/browser`, run by `scripts/ui`).

use std::process::Stdio;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

struct Ui {
    _child: Child,
    base: String,
    port: u16,
    token: String,
    http: reqwest::Client,
}

/// Starts `rsrc ui` (the bundled sample) and reads its URL, the first line on stdout.
async fn start() -> Ui {
    start_with(&[]).await
}

/// Starts `rsrc ui ARGS` and reads its URL, the first line on stdout.
async fn start_with(args: &[&str]) -> Ui {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .arg("ui")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the rsrc binary starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.next_line().await.unwrap().expect("a URL on stdout");
    let (base, token) = url
        .split_once("/?token=")
        .expect("the URL carries the token");
    assert!(base.starts_with("http://127.0.0.1:"), "{url}");
    let port = base.rsplit(':').next().unwrap().parse().unwrap();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    Ui {
        _child: child,
        base: base.to_owned(),
        port,
        token: token.to_owned(),
        http,
    }
}

impl Ui {
    fn cookie(&self) -> String {
        format!("rsrc-ui-{}={}", self.port, self.token)
    }

    async fn get(&self, path: &str, headers: &[(&'static str, &str)]) -> reqwest::Response {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        self.http
            .get(format!("{}{path}", self.base))
            .headers(h)
            .send()
            .await
            .unwrap()
    }

    async fn api(&self, path: &str) -> (u16, Value) {
        let r = self.get(path, &[("cookie", &self.cookie())]).await;
        let status = r.status().as_u16();
        (
            status,
            serde_json::from_str(&r.text().await.unwrap()).unwrap(),
        )
    }

    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.http
            .post(format!("{}{path}", self.base))
            .header("cookie", self.cookie())
            .header("origin", self.base.clone())
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }

    /// Waits until the sample is connected (the page would wait for its status event).
    async fn connected(&self) {
        self.all_connected(1).await;
    }

    /// Waits until the first `n` servers are connected; their statuses.
    async fn all_connected(&self, n: usize) -> Vec<Value> {
        loop {
            let (_, servers) = self.api("/api/servers").await;
            let statuses = servers["servers"].as_array().unwrap()[..n].to_vec();
            if statuses.iter().any(|s| s["state"] == "disconnected") {
                panic!("{servers}");
            }
            if statuses.iter().all(|s| s["state"] == "connected") {
                return statuses;
            }
            tokio::task::yield_now().await;
        }
    }
}

#[tokio::test]
async fn the_page_needs_its_token_which_becomes_a_strict_cookie() {
    let ui = start().await;
    for path in ["/", "/api/servers", "/assets/main.js", "/?token=wrong"] {
        let r = ui.get(path, &[]).await;
        assert_eq!(r.status(), 401, "{path}");
        assert!(r.headers().contains_key("content-security-policy"));
    }
    let r = ui.get(&format!("/?token={}", ui.token), &[]).await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/");
    assert_eq!(
        r.headers()["set-cookie"],
        format!("{}; Path=/; HttpOnly; SameSite=Strict", ui.cookie()).as_str()
    );
    let r = ui.get("/", &[("cookie", &ui.cookie())]).await;
    assert_eq!(r.status(), 200);
    let h = r.headers();
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    let csp = h["content-security-policy"].to_str().unwrap();
    for directive in [
        "default-src 'self'",
        "script-src 'self';",
        "img-src 'self' data: blob:",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["cache-control"], "no-store");
    assert_eq!(h["referrer-policy"], "no-referrer");
    let js = ui.get("/assets/main.js", &[("cookie", &ui.cookie())]).await;
    assert_eq!(
        js.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
}

#[tokio::test]
async fn other_hosts_origins_and_sites_are_refused_even_with_the_token() {
    let ui = start().await;
    let cookie = ui.cookie();
    let rebound = format!("evil.example:{}", ui.port);
    let refused: [&[(&'static str, &str)]; 4] = [
        &[("host", &rebound)],
        &[("origin", "http://evil.example")],
        &[("origin", "null")],
        &[("sec-fetch-site", "cross-site")],
    ];
    for headers in refused {
        let mut all = headers.to_vec();
        all.push(("cookie", &cookie));
        let r = ui.get("/api/servers", &all).await;
        assert_eq!(r.status(), 403, "{headers:?}");
    }
    let ours = ui.base.clone();
    let r = ui
        .get(
            "/api/servers",
            &[
                ("cookie", &cookie),
                ("origin", &ours),
                ("sec-fetch-site", "same-origin"),
            ],
        )
        .await;
    assert_eq!(r.status(), 200);
    let localhost = format!("localhost:{}", ui.port);
    let r = ui
        .get("/api/servers", &[("cookie", &cookie), ("host", &localhost)])
        .await;
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn the_api_lists_reads_completes_searches_and_bundles() {
    let ui = start().await;
    ui.connected().await;
    let (_, servers) = ui.api("/api/servers").await;
    let s = &servers["servers"][0];
    assert_eq!(
        (s["label"].as_str(), s["kind"].as_str()),
        (Some("bundled sample"), Some("sample"))
    );
    assert_eq!(s["live"], true);

    let (status, list) = ui.api("/api/list?server=0").await;
    assert_eq!(status, 200);
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"sample:///README.md"), "{uris:?}");
    let (_, children) = ui.api("/api/list?server=0&uri=sample:///guide").await;
    assert_eq!(children["resources"].as_array().unwrap().len(), 2);

    let (status, read) = ui.api("/api/read?server=0&uri=sample:///README.md").await;
    assert_eq!(status, 200);
    let entry = &read["contents"][0];
    assert_eq!(entry["view"], "markdown");
    assert!(entry["html"].as_str().unwrap().contains("<h1>"), "{entry}");
    assert_eq!(read["cacheScope"], "private");
    let raw = ui
        .get(entry["href"].as_str().unwrap(), &[("cookie", &ui.cookie())])
        .await;
    assert_eq!(raw.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(raw.headers()["content-disposition"], "attachment");
    assert!(
        raw.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("sandbox")
    );
    assert_eq!(raw.text().await.unwrap(), entry["text"].as_str().unwrap());

    let (_, logo) = ui
        .api("/api/read?server=0&uri=sample:///images/logo.png")
        .await;
    assert_eq!(logo["contents"][0]["view"], "image");
    assert!(
        logo["contents"][0]["hex"]
            .as_str()
            .unwrap()
            .starts_with("00000000  89 50 4e 47")
    );
    let (_, report) = ui.api("/api/read?server=0&uri=sample:///data/report").await;
    assert_eq!(
        report["contents"].as_array().unwrap().len(),
        2,
        "two formats"
    );

    let (status, missing) = ui.api("/api/read?server=0&uri=sample:///nope").await;
    assert_eq!(status, 502);
    assert_eq!(missing["error"]["kind"], "rpc");
    assert_eq!(missing["error"]["code"], -32602);
    let (status, _) = ui.api("/api/read?server=9&uri=x:y").await;
    assert_eq!(status, 400);

    let (_, templates) = ui.api("/api/templates?server=0").await;
    let rows = &templates["templates"][0];
    assert_eq!(rows["template"]["uriTemplate"], "db://{db}/{table}/{pk}");
    assert_eq!(rows["variables"], json!(["db", "table", "pk"]));
    let expanded: Value = ui
        .post(
            "/api/expand",
            json!({"template": "db://{db}/{table}/{pk}", "values": {"db": "bookshop", "table": "a b", "pk": ""}}),
        )
        .await
        .text()
        .await
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap();
    assert_eq!(expanded["uri"], "db://bookshop/a%20b/");
    let done: Value = ui
        .post(
            "/api/complete",
            json!({"server": 0, "template": "db://{db}/{table}/{pk}", "argument": "table", "value": "bo", "context": {"db": "bookshop"}}),
        )
        .await
        .text()
        .await
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap();
    assert!(
        done["values"].as_array().unwrap().contains(&json!("books")),
        "{done}"
    );

    let (_, found) = ui.api("/api/search?q=GETTING").await;
    let hit = &found["servers"][0];
    assert_eq!(
        hit["byServer"], true,
        "the sample declares SEP-2564 filtering"
    );
    assert_eq!(
        hit["resources"][0]["uri"],
        "sample:///guide/getting-started.md"
    );
    let (status, _) = ui.api("/api/search?q=").await;
    assert_eq!(status, 400);

    let bundle = ui
        .post(
            "/api/bundle",
            json!({"format": "markdown", "items": [{"server": 0, "uri": "sample:///guide/uri-schemes.md"}, {"server": 0, "uri": "sample:///nope"}]}),
        )
        .await;
    assert_eq!(
        bundle.headers()["content-disposition"],
        "attachment; filename=\"context.md\""
    );
    let text = bundle.text().await.unwrap();
    assert!(
        text.contains("## `sample:///guide/uri-schemes.md`"),
        "{text}"
    );
    assert!(text.contains("Not included:"), "{text}");
    // A POST that is not JSON is refused.
    let r = ui
        .http
        .post(format!("{}/api/expand", ui.base))
        .header("cookie", ui.cookie())
        .body("template=x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
}

/// A server declaring rsrc's SEP-2093 extension and one without it (`rsrc serve
/// --no-resource-metadata`): collections are opened and metadata asked only where it is
/// declared; elsewhere the page is told it is not offered, and nothing is asked.
#[tokio::test]
async fn the_api_uses_the_resource_metadata_extension_only_where_declared() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/guide.md"), "A guide.\n").unwrap();
    let (rsrc, root) = (env!("CARGO_BIN_EXE_rsrc"), dir.path().to_str().unwrap());
    let with = format!("{rsrc} serve {root}");
    let without = format!("{rsrc} serve --no-resource-metadata {root}");
    let ui = start_with(&["-c", &with, "-c", &without]).await;
    let statuses = ui.all_connected(2).await;
    assert_eq!(statuses[0]["resourceMetadata"], true, "{statuses:?}");
    assert_eq!(statuses[1]["resourceMetadata"], false, "{statuses:?}");

    let (status, meta) = ui.api("/api/metadata?server=0&uri=file:///docs").await;
    assert_eq!(status, 200);
    assert_eq!(meta["resource"]["resourceType"], "collection", "{meta}");
    let (status, children) = ui.api("/api/list?server=0&uri=file:///docs").await;
    assert_eq!(status, 200);
    assert_eq!(children["resources"][0]["uri"], "file:///docs/guide.md");

    let (status, meta) = ui.api("/api/metadata?server=1&uri=file:///docs").await;
    assert_eq!((status, &meta), (200, &json!({"unsupported": true})));
    let (status, children) = ui.api("/api/list?server=1&uri=file:///docs").await;
    assert_eq!(status, 501, "{children}");
    assert_eq!(children["error"]["kind"], "unsupported");
    let message = children["error"]["message"].as_str().unwrap();
    assert!(message.contains("dev.rsrc/resource-metadata"), "{message}");
    // Nothing was asked, so nothing is suspected: the server stays connected, and its
    // listing carries no SEP-2093 member.
    let (_, list) = ui.api("/api/list?server=1").await;
    let resources = list["resources"].as_array().unwrap();
    assert_eq!(resources[0]["uri"], "file:///docs/guide.md", "{list}");
    assert!(resources[0].get("resourceType").is_none(), "{list}");
    assert_eq!(ui.all_connected(2).await[1]["state"], "connected");
}
