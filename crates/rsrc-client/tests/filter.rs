//! SEP-2564 from the client's side: a `filter` goes only to servers that declare
//! `resources.filtering`, everything returned matches whoever filtered, and a search by
//! name or URI is two filtered listings merged.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rsrc::filter::Filter;
use rsrc::protocol::ProtocolVersion;
use rsrc::protocol::resources::ListFilter;
use rsrc_client::{Client, ClientOptions, EraPreference, in_any_segment};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ITEMS: [(&str, &str); 4] = [
    ("README.md", "x:///README.md"),
    ("guide.md", "x:///docs/guide.md"),
    ("notes.txt", "x:///docs/notes.txt"),
    ("logo.png", "x:///img/logo.png"),
];

/// A legacy server over a byte stream listing `ITEMS` two per page. When `declares`, it
/// declares filtering; when `applies`, it honours `filter` with rsrc's own rule. Every
/// `resources/list` params is logged.
async fn server(declares: bool, applies: bool) -> (Client, Arc<Mutex<Vec<Value>>>) {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&log);
    tokio::spawn(async move {
        let (r, mut w) = tokio::io::split(server_end);
        let mut lines = BufReader::new(r).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let msg: Value = serde_json::from_str(&line).unwrap();
            let (Some(method), Some(id)) = (msg["method"].as_str(), msg.get("id")) else {
                continue;
            };
            let result = match method {
                "initialize" => {
                    let mut resources = json!({});
                    if declares {
                        resources["filtering"] = json!({"supported": ListFilter::FIELDS});
                    }
                    json!({"protocolVersion":"2025-11-25","capabilities":{"resources":resources},
                        "serverInfo":{"name":"filtering","version":"1"}})
                }
                "resources/list" => {
                    let params = msg["params"].clone();
                    seen.lock().unwrap().push(params.clone());
                    let filter: ListFilter =
                        serde_json::from_value(params["filter"].clone()).unwrap_or_default();
                    let filter = Filter::new(&filter).unwrap().filter(|_| applies);
                    let all: Vec<Value> = ITEMS
                        .iter()
                        .filter(|(n, u)| filter.as_ref().is_none_or(|f| f.matches(n, u)))
                        .map(|(n, u)| json!({"uri": u, "name": n}))
                        .collect();
                    let from: usize = params["cursor"].as_str().map_or(0, |c| c.parse().unwrap());
                    let page: Vec<Value> = all.iter().skip(from).take(2).cloned().collect();
                    let mut result = json!({"resources": page});
                    if from + 2 < all.len() {
                        result["nextCursor"] = json!((from + 2).to_string());
                    }
                    result
                }
                _ => {
                    let e = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"no"}});
                    w.write_all(format!("{e}\n").as_bytes()).await.unwrap();
                    continue;
                }
            };
            let reply = json!({"jsonrpc":"2.0","id":id,"result":result});
            w.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        }
    });
    let (r, w) = tokio::io::split(client_end);
    let options = ClientOptions {
        era: EraPreference::Legacy(ProtocolVersion::V2025_11_25),
        request_timeout: Duration::from_secs(5),
        ..ClientOptions::default()
    };
    (Client::connect(r, w, options).await.unwrap(), log)
}

fn names(items: &[rsrc::protocol::Resource]) -> Vec<&str> {
    items.iter().map(|r| r.name.as_str()).collect()
}

fn by_name(globs: &[&str]) -> ListFilter {
    ListFilter {
        name_patterns: Some(globs.iter().map(|s| s.to_string()).collect()),
        uri_patterns: None,
    }
}

#[tokio::test]
async fn a_server_that_declares_filtering_is_sent_the_filter_and_filters() {
    let (client, log) = server(true, true).await;
    assert!(client.filters(&by_name(&["*.md"])));
    let got = client
        .list_matching(None, &by_name(&["*.md"]), 10)
        .await
        .unwrap();
    assert!(got.by_server);
    assert_eq!(names(&got.items), ["README.md", "guide.md"]);
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 1, "one page: the server filtered");
    assert_eq!(log[0]["filter"], json!({"namePatterns": ["*.md"]}));
}

#[tokio::test]
async fn a_server_without_filtering_gets_plain_listings_filtered_here() {
    let (client, log) = server(false, false).await;
    let filter = ListFilter {
        name_patterns: Some(vec!["*.md".into(), "*.txt".into()]),
        uri_patterns: Some(vec!["x:///docs/*".into()]),
    };
    assert!(!client.filters(&filter));
    let got = client.list_matching(None, &filter, 10).await.unwrap();
    assert!(!got.by_server);
    assert_eq!(names(&got.items), ["guide.md", "notes.txt"]);
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 2, "every page was listed");
    assert!(log.iter().all(|p| p.get("filter").is_none()), "{log:?}");
}

#[tokio::test]
async fn a_server_that_declares_filtering_but_ignores_it_cannot_widen_the_answer() {
    let (client, _) = server(true, false).await;
    let got = client
        .list_matching(None, &by_name(&["*.png"]), 10)
        .await
        .unwrap();
    assert_eq!(names(&got.items), ["logo.png"]);
}

#[tokio::test]
async fn a_search_by_name_or_uri_is_two_filtered_listings_merged_once() {
    let (client, log) = server(true, true).await;
    let names_sent = ["*docs*".to_owned(), "*README*".to_owned()];
    let uris_sent: Vec<String> = names_sent.iter().flat_map(|g| in_any_segment(g)).collect();
    let got = client
        .search_resources(None, &names_sent, &uris_sent, 10)
        .await
        .unwrap();
    assert!(got.by_server);
    assert_eq!(names(&got.items), ["README.md", "guide.md", "notes.txt"]);
    let log = log.lock().unwrap();
    let filters: Vec<&Value> = log.iter().map(|p| &p["filter"]).collect();
    let by_uri =
        json!({"uriPatterns": ["**/*docs*", "**/*docs*/**", "**/*README*", "**/*README*/**"]});
    assert_eq!(
        filters,
        [
            &json!({"namePatterns": ["*docs*", "*README*"]}),
            &by_uri,
            &by_uri,
        ]
    );
}

#[tokio::test]
async fn a_filtered_listing_stops_at_the_page_cap_and_says_so() {
    let (client, _) = server(false, false).await;
    let got = client
        .list_matching(None, &by_name(&["*"]), 1)
        .await
        .unwrap();
    assert!(got.truncated);
    assert_eq!(got.items.len(), 2);
}
