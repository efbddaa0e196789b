//! rsrc-providers sources behind rmcp, in both eras: the skills extension (SEP-2640)
//! through rmcp's typed `skills/list`, `skills/get` and `resources/directory/read` (rmcp
//! answers them only when `get_info` declares the extension: the merged capabilities
//! do), and a whole `rsrc::Router` holding a SQLite database.

mod common;

use std::path::PathBuf;

use common::ERAS;
use rmcp::ServerHandler;
use rmcp::model::{GetSkillRequestParams, ReadResourceDirectoryRequestParams};
use rsrc_providers::skills::{SkillsConfig, SkillsProvider};
use rsrc_rmcp::{Resources, resource_handler};

#[derive(Clone)]
struct Skills {
    resources: Resources,
}

#[resource_handler]
impl ServerHandler for Skills {}

fn skills() -> Skills {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance/skills");
    let provider = SkillsProvider::new(vec![(None, dir)], SkillsConfig::default()).unwrap();
    let server = provider
        .install(rsrc::Server::builder("skills", "1.0"))
        .build()
        .unwrap();
    Skills {
        resources: Resources::new(server),
    }
}

#[tokio::test]
async fn skills_are_listed_got_and_their_directories_read() {
    for era in ERAS {
        let (client, _) = common::rmcp_client(skills(), era).await;
        let listed = client.list_all_skills().await.unwrap();
        let mut names: Vec<_> = listed.iter().map(|s| s.name().to_owned()).collect();
        names.sort_unstable();
        assert_eq!(names, ["git-workflow", "pdf-processing"], "{era:?}");
        let uri = "skill://pdf-processing/SKILL.md";
        let got = client
            .get_skill(GetSkillRequestParams::new(uri))
            .await
            .unwrap();
        assert_eq!(got.skill.uri, uri);
        let children = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(
                "skill://pdf-processing/templates",
            ))
            .await
            .unwrap();
        let uris: Vec<_> = children.resources.iter().map(|r| r.uri.as_str()).collect();
        assert!(
            uris.contains(&"skill://pdf-processing/templates/invoice.md"),
            "{uris:?}"
        );
        client.cancel().await.unwrap();
    }
}

/// A whole `rsrc::Router` — a SQLite database and a declared set — behind one rmcp server.
#[derive(Clone)]
struct Routed {
    resources: Resources,
}

#[resource_handler]
impl ServerHandler for Routed {}

#[tokio::test]
async fn a_whole_router_with_a_sqlite_database_is_served() {
    use rsrc_providers::db::PREFIX;
    use rsrc_providers::db::sqlite::{SqliteConfig, SqliteProvider, SqliteSource};
    let db = SqliteProvider::new(
        vec![SqliteSource::script(
            "mem",
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one');",
        )],
        SqliteConfig::default(),
    )
    .unwrap();
    let router = rsrc::Router::new()
        .mount(PREFIX, db)
        .mount("sample:", common::sample_set());
    let server = rsrc::Server::builder("routed", "1.0")
        .router(router)
        .build()
        .unwrap();
    for era in ERAS {
        let handler = Routed {
            resources: Resources::new(server.clone()),
        };
        let (client, _) = common::rmcp_client(handler, era).await;
        let row = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new("db://mem/t/1"))
            .await
            .unwrap();
        // The row as JSON, and its CSV alternative.
        assert_eq!(row.contents.len(), 2, "{era:?}: {row:?}");
        let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &row.contents[0]
        else {
            panic!("{row:?}");
        };
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(text).unwrap(),
            serde_json::json!({"id": 1, "v": "one"})
        );
        let listed = client.list_all_resources().await.unwrap();
        assert!(listed.iter().any(|r| r.uri == "db://mem/t"), "{era:?}");
        assert!(listed.iter().any(|r| r.uri == "sample:///README.md"));
        client.cancel().await.unwrap();
    }
}
