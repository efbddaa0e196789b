//! The bookshop example (`examples/bookshop.rs`) on the wire: a database-backed resource
//! with a CSV alternative, a collection whose children are rows, listing and completion.
#![cfg(feature = "macros")]

mod common;

#[allow(dead_code, unreachable_pub)]
#[path = "../examples/bookshop.rs"]
mod bookshop;

use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::{Value, json};

async fn peer() -> Peer {
    common::connect_as(&bookshop::server().unwrap(), ProtocolVersion::V2025_11_25).await
}

#[tokio::test]
async fn a_book_is_a_row_as_json_with_a_csv_alternative() {
    let mut p = peer().await;
    let r = common::read(&mut p, "books://books/3").await;
    let contents = r["result"]["contents"].as_array().unwrap();
    assert_eq!(contents[0]["mimeType"], "application/json");
    let book: Value = serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(book["title"], "Dune");
    assert_eq!(contents[1]["mimeType"], "text/csv");
    assert_eq!(
        contents[1]["text"],
        "id,title,author,year\n3,\"Dune\",\"Frank Herbert\",1965\n"
    );
    let missing = common::read(&mut p, "books://books/99").await;
    assert_eq!(missing["error"]["data"]["uri"], "books://books/99");
}

#[tokio::test]
async fn an_author_is_a_collection_of_their_books() {
    let mut p = peer().await;
    let uri = "books://authors/Jane%20Austen";
    let list = p.request("resources/list", json!({ "uri": uri })).await;
    let children: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(children, ["Emma", "Persuasion"]);
    let read = common::read(&mut p, uri).await;
    let contents = read["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2);
    assert_eq!(contents[1]["uri"], "books://books/2");
    let meta = p.request("resources/metadata", json!({ "uri": uri })).await;
    assert_eq!(meta["result"]["resource"]["resourceType"], "collection");
}

#[tokio::test]
async fn books_are_listed_and_authors_complete() {
    let mut p = peer().await;
    let list = p.request("resources/list", json!({})).await;
    let titles: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Emma", "Persuasion", "Dune", "Beloved"]);
    let done = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "books://authors/{author}"}, "argument": {"name": "author", "value": "J"}}),
        )
        .await;
    assert_eq!(
        done["result"]["completion"]["values"],
        json!(["Jane Austen"])
    );
}
