//! SEP-2564 server-side filtering across the providers, on the wire in raw JSON (every
//! server message validated against the schema of its revision): each provider applies
//! the filter in its own walk, so these check its results against the definition (globs
//! on names and URIs, fields ANDed, patterns ORed), cursors over a filtered walk and their
//! refusal under another filter, and bounded work on large sources: a page examines at
//! most 10,000 candidates, and the filesystem does not enter a directory no URI pattern
//! can reach. PostgreSQL's are in `postgres.rs`, beside its server fixture.

mod common;
#[cfg(feature = "git")]
#[path = "common/gitrepo.rs"]
mod gitrepo;
#[cfg(feature = "sqlite")]
#[path = "common/sqlite.rs"]
mod sqlite_fixtures;

use rsrc::Server;
use rsrc::protocol::ProtocolVersion;
use rsrc_testkit::Peer;
use serde_json::{Value, json};

use common::{peer_for, write};

/// Every resource (`[uri, name]`) of a complete walk of `resources/list` with `params`,
/// and the number of pages.
async fn walk(p: &mut Peer, mut params: Value) -> (Vec<[String; 2]>, usize) {
    let (mut found, mut pages) = (Vec::new(), 0);
    loop {
        let resp = p.call("resources/list", params.clone()).await;
        let result = &resp["result"];
        pages += 1;
        for r in result["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{resp}"))
        {
            found.push(["uri", "name"].map(|k| r[k].as_str().unwrap().to_owned()));
        }
        match result.get("nextCursor") {
            Some(c) => params["cursor"] = c.clone(),
            None => return (found, pages),
        }
        assert!(pages < 10_000, "the walk does not end");
    }
}

/// The URIs of a complete walk (of the children of `uri`, if given) under `filter`.
async fn uris(p: &mut Peer, uri: Option<&str>, filter: Value) -> Vec<String> {
    let mut params = json!({ "filter": filter });
    if let Some(uri) = uri {
        params["uri"] = uri.into();
    }
    walk(p, params)
        .await
        .0
        .into_iter()
        .map(|[u, _]| u)
        .collect()
}

/// The URIs of the unfiltered walk whose `[uri, name]` `keep` accepts: what a filter
/// should give, in order.
async fn expected(
    p: &mut Peer,
    uri: Option<&str>,
    keep: impl Fn(&str, &str) -> bool,
) -> Vec<String> {
    let params = uri.map_or_else(|| json!({}), |u| json!({ "uri": u }));
    walk(p, params)
        .await
        .0
        .into_iter()
        .filter(|[u, n]| keep(u, n))
        .map(|[u, _]| u)
        .collect()
}

/// The first page under `filter` gives a cursor that is refused under `other`.
async fn cursor_is_sealed_to_its_filter(
    p: &mut Peer,
    uri: Option<&str>,
    filter: Value,
    other: Value,
) {
    let mut params = json!({ "filter": filter });
    if let Some(uri) = uri {
        params["uri"] = uri.into();
    }
    let first = p.call("resources/list", params.clone()).await;
    let cursor = first["result"]["nextCursor"].clone();
    assert!(cursor.is_string(), "a first page that goes on: {first}");
    params["cursor"] = cursor;
    let same = p.call("resources/list", params.clone()).await;
    assert!(same["result"].is_object(), "{same}");
    for changed in [Some(other), None] {
        match changed {
            Some(f) => params["filter"] = f,
            None => drop(params.as_object_mut().unwrap().remove("filter")),
        }
        let resp = p.call("resources/list", params.clone()).await;
        assert_eq!(resp["error"]["code"], -32602, "{params}: {resp}");
    }
}

async fn peer_as(server: &Server, v: ProtocolVersion) -> Peer {
    let mut p = peer_for(server).await;
    p.speak(v);
    p
}

#[cfg(unix)]
mod fs {
    use rsrc_providers::fs::{FsConfig, FsProvider, FsRoot, PREFIX};

    use super::*;
    use common::server_for;

    fn tree(root: &std::path::Path) {
        for (path, text) in [
            ("README.md", "read me"),
            ("résumé.md", "cv"),
            ("notes.txt", "notes"),
            ("docs/a.md", "a"),
            ("docs/b.txt", "b"),
            ("docs/deep/c.md", "c"),
            ("src/main.rs", "fn main() {}"),
            ("src/lib/mod.rs", "// lib"),
        ] {
            write(root, path, text);
        }
    }

    fn served(root: &std::path::Path, page_size: usize) -> Server {
        server_for(
            FsProvider::single(root, FsConfig::default()).unwrap(),
            page_size,
        )
    }

    #[tokio::test]
    async fn names_and_uris_select_files_in_both_eras() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let server = served(dir.path(), 1000);
        for v in ProtocolVersion::ALL {
            let mut p = peer_as(&server, v).await;
            let md = uris(&mut p, None, json!({"namePatterns": ["*.md"]})).await;
            assert_eq!(
                md,
                [
                    "file:///README.md",
                    "file:///docs/a.md",
                    "file:///docs/deep/c.md",
                    "file:///r%C3%A9sum%C3%A9.md"
                ],
                "{v}"
            );
            // `?` is one character, even outside ASCII; URIs are matched as written.
            for filter in [
                json!({"namePatterns": ["r?sum?.md"]}),
                json!({"uriPatterns": ["file:///r%C3%A9sum*"]}),
            ] {
                assert_eq!(
                    uris(&mut p, None, filter).await,
                    ["file:///r%C3%A9sum%C3%A9.md"],
                    "{v}"
                );
            }
            assert_eq!(
                uris(&mut p, None, json!({"uriPatterns": ["file:///docs/**"]})).await,
                [
                    "file:///docs/a.md",
                    "file:///docs/b.txt",
                    "file:///docs/deep/c.md"
                ],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    None,
                    json!({"namePatterns": ["*.md"], "uriPatterns": ["file:///docs/*"]})
                )
                .await,
                ["file:///docs/a.md"],
                "AND ({v})"
            );
            assert_eq!(
                uris(&mut p, None, json!({"namePatterns": ["*.rs", "notes.*"]})).await,
                [
                    "file:///notes.txt",
                    "file:///src/lib/mod.rs",
                    "file:///src/main.rs"
                ],
                "OR ({v})"
            );
            // A directory's children: files and directories alike.
            assert_eq!(
                uris(
                    &mut p,
                    Some("file:///docs"),
                    json!({"namePatterns": ["*.md", "deep"]})
                )
                .await,
                ["file:///docs/a.md", "file:///docs/deep"],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    Some("file:///docs"),
                    json!({"uriPatterns": ["file:///docs/*.txt"]})
                )
                .await,
                ["file:///docs/b.txt"],
                "{v}"
            );
        }
    }

    #[tokio::test]
    async fn filtered_walks_page_like_the_filter_over_the_whole_listing() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        for i in 0..40 {
            write(
                dir.path(),
                &format!("more/m{i:02}.{}", ["md", "txt"][i % 2]),
                "x",
            );
        }
        let server = served(dir.path(), 3);
        let mut p = peer_as(&server, ProtocolVersion::V2025_11_25).await;
        let md = |_: &str, n: &str| n.ends_with(".md");
        let want = expected(&mut p, None, md).await;
        assert_eq!(want.len(), 24);
        let (got, pages) = walk(&mut p, json!({"filter": {"namePatterns": ["*.md"]}})).await;
        assert_eq!(got.iter().map(|[u, _]| u.clone()).collect::<Vec<_>>(), want);
        assert!(pages >= 8, "{pages} pages of at most 3");
        let want = expected(&mut p, Some("file:///more"), md).await;
        assert_eq!(
            uris(
                &mut p,
                Some("file:///more"),
                json!({"namePatterns": ["*.md"]})
            )
            .await,
            want
        );
        cursor_is_sealed_to_its_filter(
            &mut p,
            None,
            json!({"namePatterns": ["*.md"]}),
            json!({"namePatterns": ["*.txt"]}),
        )
        .await;
        cursor_is_sealed_to_its_filter(
            &mut p,
            Some("file:///more"),
            json!({"uriPatterns": ["file:///more/*"]}),
            json!({"uriPatterns": ["file:///more/m*"]}),
        )
        .await;
    }

    #[tokio::test]
    async fn a_large_tree_is_walked_a_bounded_part_per_page() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        for i in 0..12_000 {
            write(dir.path(), &format!("bulk/f{i:05}.txt"), "");
        }
        let server = served(dir.path(), 1000);
        let mut p = peer_as(&server, ProtocolVersion::V2026_07_28).await;
        // Nothing matches: empty pages with cursors, 10,000 entries examined each.
        let first = p
            .call(
                "resources/list",
                json!({"filter": {"namePatterns": ["*.nothing"]}}),
            )
            .await;
        assert_eq!(first["result"]["resources"], json!([]));
        assert!(first["result"]["nextCursor"].is_string(), "{first}");
        let (none, pages) = walk(&mut p, json!({"filter": {"namePatterns": ["*.nothing"]}})).await;
        assert!(none.is_empty());
        assert_eq!(pages, 2);
        // What matches at the end is found.
        let (last, _) = walk(&mut p, json!({"filter": {"namePatterns": ["f1199?.txt"]}})).await;
        let last: Vec<String> = last.into_iter().map(|[_, n]| n).collect();
        let names: Vec<String> = (11_990..12_000).map(|i| format!("f{i:05}.txt")).collect();
        assert_eq!(last, names);
        // A directory no URI pattern can reach is not entered: one page, nothing examined
        // in `bulk`.
        let (docs, pages) = walk(
            &mut p,
            json!({"filter": {"uriPatterns": ["file:///docs/**"]}}),
        )
        .await;
        assert_eq!(docs.len(), 3);
        assert_eq!(pages, 1);
        // A large directory's children, the same.
        let (none, pages) = walk(
            &mut p,
            json!({"uri": "file:///bulk", "filter": {"namePatterns": ["*.nothing"]}}),
        )
        .await;
        assert!(none.is_empty());
        assert_eq!(pages, 2);
    }

    #[tokio::test]
    async fn several_roots_are_filtered_by_their_uris_and_names() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(one.path(), "a.md", "a");
        write(one.path(), "b.txt", "b");
        write(two.path(), "c.md", "c");
        let roots = vec![
            FsRoot::new("one", one.path()),
            FsRoot::new("two", two.path()),
        ];
        let provider = FsProvider::with_roots(roots, FsConfig::default()).unwrap();
        let server = server_for(provider, 1000);
        let mut p = peer_as(&server, ProtocolVersion::V2025_06_18).await;
        assert_eq!(
            uris(&mut p, None, json!({"uriPatterns": ["file:///two/**"]})).await,
            ["file:///two/c.md"]
        );
        assert_eq!(
            uris(&mut p, None, json!({"namePatterns": ["*.md"]})).await,
            ["file:///one/a.md", "file:///two/c.md"]
        );
        assert_eq!(
            uris(&mut p, Some(PREFIX), json!({"namePatterns": ["t*"]})).await,
            ["file:///two"]
        );
    }
}

#[cfg(feature = "git")]
mod git {
    use rsrc::ServerConfig;
    use rsrc_providers::git::{GitConfig, GitProvider, PREFIX};

    use super::*;
    use crate::gitrepo::{Fixture, Item};

    fn server(page_size: usize) -> (Fixture, Server) {
        let f = Fixture::new();
        let first = f.commit("main", "first", &[Item::File("README.md", b"# v1\n")]);
        f.commit(
            "main",
            "second",
            &[
                Item::File("README.md", b"# v2\n"),
                Item::File("NOTES.md", b"notes"),
                Item::File("src/main.rs", b"fn main() {}\n"),
                Item::File("src/lib.rs", b"// lib\n"),
                Item::File("src/util/mod.rs", b"// util\n"),
            ],
        );
        f.set_ref("refs/heads/feature/x", first);
        f.set_ref("refs/tags/v1", first);
        f.annotated_tag("v1-annotated", first);
        let config = GitConfig {
            poll_interval: None,
            ..GitConfig::default()
        };
        let provider = GitProvider::open(f.path(), config).unwrap();
        let server = Server::builder("git-test", "0")
            .mount(PREFIX, provider)
            .config(ServerConfig {
                page_size,
                ..ServerConfig::default()
            })
            .build()
            .unwrap();
        (f, server)
    }

    #[tokio::test]
    async fn refs_and_tree_entries_are_filtered_by_name_and_uri() {
        let (_f, server) = server(1000);
        for v in ProtocolVersion::ALL {
            let mut p = peer_as(&server, v).await;
            assert_eq!(
                uris(&mut p, None, json!({"namePatterns": ["v1*"]})).await,
                ["git:///v1", "git:///v1-annotated"],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    Some("git:///"),
                    json!({"uriPatterns": ["git:///feature*"]})
                )
                .await,
                ["git:///feature%2Fx"],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    Some("git:///main"),
                    json!({"namePatterns": ["*.md", "src"]})
                )
                .await,
                [
                    "git:///main/NOTES.md",
                    "git:///main/README.md",
                    "git:///main/src"
                ],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    Some("git:///main/src"),
                    json!({"namePatterns": ["m*"], "uriPatterns": ["git:///main/src/*.rs"]})
                )
                .await,
                ["git:///main/src/main.rs"],
                "AND ({v})"
            );
        }
    }

    #[tokio::test]
    async fn a_filtered_tree_pages_with_sealed_cursors() {
        let (_f, server) = server(1);
        let mut p = peer_as(&server, ProtocolVersion::V2025_11_25).await;
        let want = expected(&mut p, Some("git:///main/src"), |_, n| n.ends_with(".rs")).await;
        assert_eq!(want, ["git:///main/src/lib.rs", "git:///main/src/main.rs"]);
        assert_eq!(
            uris(
                &mut p,
                Some("git:///main/src"),
                json!({"namePatterns": ["*.rs"]})
            )
            .await,
            want
        );
        cursor_is_sealed_to_its_filter(
            &mut p,
            Some("git:///main/src"),
            json!({"namePatterns": ["*.rs"]}),
            json!({"namePatterns": ["*.md"]}),
        )
        .await;
        cursor_is_sealed_to_its_filter(
            &mut p,
            None,
            json!({"namePatterns": ["*"]}),
            json!({"namePatterns": ["*", "v*"]}),
        )
        .await;
    }
}

#[cfg(feature = "skills")]
mod skills {
    use rsrc_providers::skills::{SkillsConfig, SkillsProvider};

    use super::*;

    fn skill_md(name: &str) -> String {
        format!("---\nname: {name}\ndescription: the {name} skill\n---\n# {name}\n")
    }

    #[tokio::test]
    async fn skills_are_filtered_by_name_and_uri() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "pdf-tools/SKILL.md", skill_md("pdf-tools"));
        write(dir.path(), "pdf-tools/forms/FORMS.md", "# Forms\n");
        write(dir.path(), "pdf-tools/forms/blank.pdf", "%PDF");
        write(dir.path(), "refunds/SKILL.md", skill_md("refunds"));
        let config = SkillsConfig {
            poll_interval: None,
            ..SkillsConfig::default()
        };
        let server = SkillsProvider::new(vec![(None, dir.path().to_path_buf())], config)
            .unwrap()
            .install(
                Server::builder("skills-test", "0").config(rsrc::ServerConfig {
                    page_size: 1,
                    ..rsrc::ServerConfig::default()
                }),
            )
            .build()
            .unwrap();
        for v in ProtocolVersion::ALL {
            let mut p = peer_as(&server, v).await;
            // A skill's SKILL.md is named after the skill.
            assert_eq!(
                uris(&mut p, None, json!({"namePatterns": ["pdf-*"]})).await,
                ["skill://pdf-tools/SKILL.md"],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    None,
                    json!({"uriPatterns": ["skill://pdf-tools/**"]})
                )
                .await,
                [
                    "skill://pdf-tools/SKILL.md",
                    "skill://pdf-tools/forms/FORMS.md",
                    "skill://pdf-tools/forms/blank.pdf"
                ],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    Some("skill://pdf-tools/forms"),
                    json!({"namePatterns": ["*.pdf"]})
                )
                .await,
                ["skill://pdf-tools/forms/blank.pdf"],
                "{v}"
            );
        }
        let mut p = peer_as(&server, ProtocolVersion::V2025_11_25).await;
        cursor_is_sealed_to_its_filter(
            &mut p,
            None,
            json!({"uriPatterns": ["skill://**"]}),
            json!({"uriPatterns": ["skill://*/**"]}),
        )
        .await;
    }
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use rsrc_providers::db::sqlite::SqliteConfig;

    use super::*;
    use crate::sqlite_fixtures::{create_db, serve_with, shop};

    #[tokio::test]
    async fn the_catalog_and_rows_are_filtered_by_name_and_uri() {
        let dir = tempfile::tempdir().unwrap();
        let path = shop(dir.path());
        let (_server, mut p) = serve_with(&path, SqliteConfig::default(), 1000).await;
        for v in ProtocolVersion::ALL {
            p.speak(v);
            assert_eq!(
                uris(&mut p, None, json!({"namePatterns": ["books", "cheap_*"]})).await,
                ["db://shop/books", "db://shop/cheap_books"],
                "{v}"
            );
            assert_eq!(
                uris(
                    &mut p,
                    None,
                    json!({"namePatterns": ["$schema"], "uriPatterns": ["db://shop/a*/*"]})
                )
                .await,
                ["db://shop/authors/$schema"],
                "AND ({v})"
            );
            assert_eq!(
                uris(
                    &mut p,
                    Some("db://shop"),
                    json!({"uriPatterns": ["db://shop/?"]})
                )
                .await,
                ["db://shop/x"],
                "{v}"
            );
            // Rows by their names (the key as text), the schema document passed over.
            let keep = |_: &str, n: &str| n.starts_with('a') || n.starts_with('b');
            let want = expected(&mut p, Some("db://shop/kv"), keep).await;
            assert_eq!(want.len(), 3, "{want:?}");
            assert_eq!(
                uris(
                    &mut p,
                    Some("db://shop/kv"),
                    json!({"namePatterns": ["a*", "b*"]})
                )
                .await,
                want,
                "{v}"
            );
        }
        let (_server, mut small) = serve_with(&path, SqliteConfig::default(), 1).await;
        let want = expected(&mut small, None, |u, _| u.ends_with("/$schema")).await;
        assert_eq!(want.len(), 7);
        let filter = json!({"uriPatterns": ["db://shop/*/$schema"]});
        assert_eq!(uris(&mut small, None, filter.clone()).await, want);
        cursor_is_sealed_to_its_filter(
            &mut small,
            None,
            filter,
            json!({"uriPatterns": ["db://shop/**"]}),
        )
        .await;
    }

    #[tokio::test]
    async fn a_large_table_is_filtered_a_bounded_part_per_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = create_db(
            dir.path(),
            "big.db",
            "CREATE TABLE big (id INTEGER PRIMARY KEY, payload TEXT);
             WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 25000)
             INSERT INTO big SELECT x, 'row' FROM c;",
        );
        let (_server, mut p) = serve_with(&path, SqliteConfig::default(), 4).await;
        let first = p
            .call(
                "resources/list",
                json!({"uri": "db://big/big", "filter": {"namePatterns": ["nothing"]}}),
            )
            .await;
        assert_eq!(first["result"]["resources"], json!([]), "{first}");
        assert!(first["result"]["nextCursor"].is_string(), "{first}");
        let (found, pages) = walk(
            &mut p,
            json!({"uri": "db://big/big", "filter": {"namePatterns": ["2499?", "1"]}}),
        )
        .await;
        let names: Vec<String> = found.into_iter().map(|[_, n]| n).collect();
        let mut want = vec!["1".to_owned()];
        want.extend((24_990..25_000).map(|i| i.to_string()));
        assert_eq!(names, want);
        assert!((3..=6).contains(&pages), "{pages} pages");
        cursor_is_sealed_to_its_filter(
            &mut p,
            Some("db://big/big"),
            json!({"namePatterns": ["1*"]}),
            json!({"namePatterns": ["2*"]}),
        )
        .await;
    }
}
