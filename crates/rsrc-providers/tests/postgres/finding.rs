//! Finding things: search across bounded calls and SEP-2564 filters within bounded pages.
//!
//! Invariant: each call examines a bounded number of relations and rows.

use super::*;

#[tokio::test]
async fn search_finds_the_catalog_by_name_and_rows_by_key_across_bounded_calls() {
    // More rows than one search call examines (50,000).
    let setup = format!(
        "{SHOP}
        CREATE TABLE public.big (id int8 PRIMARY KEY);
        INSERT INTO public.big SELECT generate_series(1, 60001);"
    );
    let Some(db) = database(&setup).await else {
        return;
    };
    let config = PostgresConfig {
        watch: false,
        ..PostgresConfig::default()
    };
    let provider = PostgresProvider::connect(Some("shop".into()), &db.url, config)
        .await
        .unwrap();
    let server = Server::builder("pg-search", "1")
        .mount(provider.prefix().to_owned(), provider)
        .tools(ToolsConfig {
            page: 50,
            ..ToolsConfig::default()
        })
        .build()
        .unwrap();
    let mut peer = common::peer_for(&server).await;
    let search = common::search_all;

    // The catalog by name or description: the database, schemas, relations (views too).
    assert_eq!(
        search(&mut peer, "postgresql database").await,
        ["db://shop"]
    );
    assert_eq!(
        search(&mut peer, "schema: 2 relations").await,
        ["db://shop/public"]
    );
    assert_eq!(
        search(&mut peer, "spenders").await,
        ["db://shop/app/big_spenders"]
    );
    assert_eq!(
        search(&mut peer, "app orders").await,
        [
            "db://shop/app/orders",
            "db://shop/app/orders/1,1",
            "db://shop/app/orders/1,2",
            "db://shop/app/orders/2,1"
        ]
    );
    // Rows by key, in key order, over many pages, and past what one call examines.
    let expected: Vec<String> = (1..=60_001)
        .filter(|i: &u32| i.to_string().contains("4242"))
        .map(|i| format!("db://shop/public/big/{i}"))
        .collect();
    assert_eq!(search(&mut peer, "big 4242").await, expected);
    assert_eq!(
        search(&mut peer, "public/big/60001").await,
        ["db://shop/public/big/60001"]
    );
    // Typed keys, any case; never a view's or materialized view's positions.
    assert_eq!(
        search(&mut peer, "6F1C2A0E").await,
        ["db://shop/app/tokens/6f1c2a0e-8a55-4bd4-9a43-3c7f9a0b1d22"]
    );
    assert_eq!(search(&mut peer, "names").await, ["db://shop/app/names"]);
    assert!(search(&mut peer, "nothing-like-this").await.is_empty());
}

#[tokio::test]
async fn sep_2564_filters_the_catalog_and_rows_within_bounded_pages_in_both_eras() {
    let Some(db) = database(&format!(
        "{SHOP}
         CREATE TABLE public.big (id int8 PRIMARY KEY, v text);
         INSERT INTO public.big SELECT g, 'row' FROM generate_series(1, 25000) g;"
    ))
    .await
    else {
        return;
    };
    let provider =
        PostgresProvider::connect(Some("shop".into()), &db.url, PostgresConfig::default())
            .await
            .expect("the provider connects");
    let prefix = provider.prefix().to_owned();
    let server = common::server_at(&prefix, provider, 4);
    for v in ProtocolVersion::ALL {
        let mut peer = common::peer_for(&server).await;
        peer.speak(v);
        let walk = |filter: Value, uri: Option<&str>| {
            let mut params = json!({ "filter": filter });
            if let Some(uri) = uri {
                params["uri"] = uri.into();
            }
            params
        };
        // The catalog: names, URIs, both (ANDed), several patterns (ORed).
        let (orders, _) = filtered_walk(
            &mut peer,
            walk(json!({"namePatterns": ["orders", "log"]}), None),
        )
        .await;
        assert_eq!(orders, ["db://shop/app/log", "db://shop/app/orders"], "{v}");
        let (schemas, _) = filtered_walk(
            &mut peer,
            walk(
                json!({"namePatterns": ["$schema"], "uriPatterns": ["db://shop/public/**"]}),
                None,
            ),
        )
        .await;
        assert_eq!(
            schemas,
            [
                "db://shop/public/big/$schema",
                "db://shop/public/users/$schema"
            ],
            "{v}"
        );
        let (app, _) = filtered_walk(
            &mut peer,
            walk(
                json!({"uriPatterns": ["db://shop/app/n*"]}),
                Some("db://shop/app"),
            ),
        )
        .await;
        assert_eq!(app, ["db://shop/app/names"], "{v}");
        // Rows: 25,000 examined 10,000 a page, what matches found wherever it is.
        let (rows, pages) = filtered_walk(
            &mut peer,
            walk(
                json!({"namePatterns": ["2499?", "7"]}),
                Some("db://shop/public/big"),
            ),
        )
        .await;
        let mut want = vec!["db://shop/public/big/7".to_owned()];
        want.extend((24_990..25_000).map(|i| format!("db://shop/public/big/{i}")));
        assert_eq!(rows, want, "{v}");
        assert!((3..=6).contains(&pages), "{pages} pages ({v})");
        // A cursor goes on under its own filter only.
        let first = peer
            .call(
                "resources/list",
                walk(
                    json!({"namePatterns": ["1*"]}),
                    Some("db://shop/public/big"),
                ),
            )
            .await;
        let mut other = walk(
            json!({"namePatterns": ["2*"]}),
            Some("db://shop/public/big"),
        );
        other["cursor"] = first["result"]["nextCursor"].clone();
        assert!(other["cursor"].is_string(), "{first}");
        let refused = peer.call("resources/list", other).await;
        assert_eq!(refused["error"]["code"], -32602, "{v}: {refused}");
        let bad = peer
            .call(
                "resources/list",
                walk(json!({"uriPatterns": ["db://[x"]}), None),
            )
            .await;
        assert_eq!(bad["error"]["code"], -32602, "{v}: {bad}");
    }
}
