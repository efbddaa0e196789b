//! The skills extension (SEP-2640) of an rsrc skills provider, through rmcp's typed
//! `skills/list`, `skills/get` and `resources/directory/read` (rmcp answers them only
//! when `get_info` declares the extension: the merged capabilities do), in both eras.

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
