//! The skills provider (SEP-2640) on real directories: entries with verbatim frontmatter,
//! digests and sizes; listing in pages and single entries; the naming rules and limits;
//! nothing hidden, linked or special served; directory reads; changes noticed.
#![cfg(feature = "skills")]

mod common;

use std::path::Path;
use std::time::Duration;

use rsrc::Server;
use rsrc::protocol::ProtocolVersion;
use rsrc_providers::skills::{SkillsConfig, SkillsProvider};
use rsrc_testkit::Peer;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use common::write;

fn skill_md(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\nlicense: MIT\nmetadata:\n  version: \"1.0\"\n---\n# {name}\n"
    )
}

fn sha(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

fn server(dirs: Vec<(Option<String>, &Path)>, config: SkillsConfig) -> Server {
    let dirs = dirs
        .into_iter()
        .map(|(n, p)| (n, p.to_path_buf()))
        .collect();
    SkillsProvider::new(dirs, config)
        .unwrap()
        .install(Server::builder("skills-test", "0"))
        .build()
        .unwrap()
}

fn quiet() -> SkillsConfig {
    SkillsConfig {
        poll_interval: None,
        ..SkillsConfig::default()
    }
}

async fn peer(server: &Server) -> Peer {
    common::peer_for(server).await
}

fn entries(result: &Value) -> Vec<String> {
    result["result"]["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("no skills: {result}"))
        .iter()
        .map(|s| s["uri"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn an_entry_carries_the_frontmatter_and_every_file_with_its_digest_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let md = skill_md("pdf-tools", "Fill PDF forms");
    write(dir.path(), "pdf-tools/SKILL.md", &md);
    write(dir.path(), "pdf-tools/references/FORMS.md", "# Forms\n");
    write(dir.path(), "pdf-tools/data.bin", [0u8, 159, 146, 150]);
    let server = server(vec![(None, dir.path())], quiet());
    for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut p = peer(&server).await;
        p.speak(v);
        let list = p.call("skills/list", json!({})).await;
        let skill = &list["result"]["skills"][0];
        assert_eq!(skill["uri"], "skill://pdf-tools/SKILL.md");
        assert_eq!(
            skill["frontmatter"],
            json!({"name": "pdf-tools", "description": "Fill PDF forms", "license": "MIT",
                "metadata": {"version": "1.0"}})
        );
        assert_eq!(
            skill["resources"],
            json!([
                {"uri": "skill://pdf-tools/SKILL.md", "digest": sha(md.as_bytes()), "size": md.len()},
                {"uri": "skill://pdf-tools/data.bin", "digest": sha(&[0, 159, 146, 150]), "size": 4},
                {"uri": "skill://pdf-tools/references/FORMS.md", "digest": sha(b"# Forms\n"), "size": 8},
            ])
        );
        assert_eq!(list["result"]["ttlMs"].is_u64(), v.is_modern(), "{list}");
        let get = p
            .call("skills/get", json!({"uri": "skill://pdf-tools/SKILL.md"}))
            .await;
        assert_eq!(&get["result"]["skill"], skill);
        assert!(get["result"].get("nextCursor").is_none());
        let unknown = p
            .call("skills/get", json!({"uri": "skill://nope/SKILL.md"}))
            .await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        // Every listed file reads back with the digest and size the entry promised.
        for r in skill["resources"].as_array().unwrap() {
            let read = p.call("resources/read", json!({"uri": r["uri"]})).await;
            let c = &read["result"]["contents"][0];
            let bytes = match c["text"].as_str() {
                Some(t) => t.as_bytes().to_vec(),
                None => {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD
                        .decode(c["blob"].as_str().unwrap())
                        .unwrap()
                }
            };
            assert_eq!(sha(&bytes), r["digest"]);
        }
        let skill_read = p
            .call(
                "resources/read",
                json!({"uri": "skill://pdf-tools/SKILL.md"}),
            )
            .await;
        let c = &skill_read["result"]["contents"][0];
        assert_eq!(c["mimeType"], "text/markdown");
        assert_eq!(c["name"], "pdf-tools");
        assert_eq!(c["description"], "Fill PDF forms");
    }
}

#[tokio::test]
async fn skills_list_in_pages_and_named_roots_prefix_their_skills() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for name in ["alpha", "beta", "gamma"] {
        write(a.path(), &format!("{name}/SKILL.md"), skill_md(name, "d"));
    }
    // Nested: the enclosing skill lists the nested one's files; the listing is flat.
    write(
        b.path(),
        "team/refunds/SKILL.md",
        skill_md("refunds", "Refund policy"),
    );
    write(
        b.path(),
        "team/refunds/nested/SKILL.md",
        skill_md("nested", "inner"),
    );
    let server = server(
        vec![
            (Some("one".into()), a.path()),
            (Some("two".into()), b.path()),
        ],
        SkillsConfig {
            page_size: 2,
            ..quiet()
        },
    );
    let mut p = peer(&server).await;
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = p.call("skills/list", params).await;
        let got = entries(&page);
        assert!(got.len() <= 2);
        all.extend(got);
        cursor = page["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(
        all,
        [
            "skill://one/alpha/SKILL.md",
            "skill://one/beta/SKILL.md",
            "skill://one/gamma/SKILL.md",
            "skill://two/team/refunds/SKILL.md",
            "skill://two/team/refunds/nested/SKILL.md",
        ]
    );
    let refunds = p
        .call(
            "skills/get",
            json!({"uri": "skill://two/team/refunds/SKILL.md"}),
        )
        .await;
    let files: Vec<&str> = refunds["result"]["skill"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://two/team/refunds/SKILL.md",
            "skill://two/team/refunds/nested/SKILL.md"
        ]
    );
    let bad = p.call("skills/list", json!({"cursor": "%%%"})).await;
    assert_eq!(bad["error"]["code"], -32602);
}

#[tokio::test]
async fn skills_breaking_the_rules_or_limits_are_not_served_at_all() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "good/SKILL.md", skill_md("good", "d"));
    write(dir.path(), "Bad_Name/SKILL.md", skill_md("Bad_Name", "d"));
    write(dir.path(), "mismatch/SKILL.md", skill_md("other", "d"));
    write(dir.path(), "no-frontmatter/SKILL.md", "# just text\n");
    write(dir.path(), "too-many/SKILL.md", skill_md("too-many", "d"));
    for i in 0..512 {
        write(dir.path(), &format!("too-many/f{i:03}.txt"), "x");
    }
    write(dir.path(), "too-big/SKILL.md", skill_md("too-big", "d"));
    let big = std::fs::File::create(dir.path().join("too-big/blob.bin")).unwrap();
    big.set_len(16 * 1024 * 1024).unwrap();
    write(
        dir.path(),
        "SKILL.md",
        skill_md("root", "the root itself is not a skill"),
    );
    let server = server(vec![(None, dir.path())], quiet());
    let mut p = peer(&server).await;
    let list = p.call("skills/list", json!({})).await;
    assert_eq!(entries(&list), ["skill://good/SKILL.md"]);
    let listed = p.call("resources/list", json!({})).await;
    for r in listed["result"]["resources"].as_array().unwrap() {
        assert!(
            r["uri"].as_str().unwrap().starts_with("skill://good/"),
            "{r}"
        );
    }
    let read = p
        .call("resources/read", json!({"uri": "skill://too-big/SKILL.md"}))
        .await;
    assert_eq!(read["error"]["code"], -32002, "{read}");
}

#[cfg(unix)]
#[tokio::test]
async fn hidden_linked_and_special_files_are_never_part_of_a_skill() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "secret");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tool/SKILL.md", skill_md("tool", "d"));
    write(dir.path(), "tool/.env", "TOKEN=1");
    write(dir.path(), "tool/.git/config", "[remote]");
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("tool/link.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("tool/linked-dir")).unwrap();
    rustix_mkfifo(&dir.path().join("tool/pipe"));
    let server = server(vec![(None, dir.path())], quiet());
    let mut p = peer(&server).await;
    let get = p
        .call("skills/get", json!({"uri": "skill://tool/SKILL.md"}))
        .await;
    assert_eq!(
        get["result"]["skill"]["resources"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "{get}"
    );
    for uri in [
        "skill://tool/.env",
        "skill://tool/.git/config",
        "skill://tool/link.txt",
        "skill://tool/linked-dir/secret.txt",
        "skill://tool/pipe",
    ] {
        let read = p.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(read["error"]["code"], -32002, "{uri}: {read}");
    }
}

#[cfg(unix)]
fn rustix_mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn directories_read_as_their_children_and_files_are_not_directories() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pdf/SKILL.md", skill_md("pdf", "d"));
    write(dir.path(), "pdf/templates/invoice.md", "i");
    write(dir.path(), "pdf/templates/regional/eu.md", "e");
    let server = server(vec![(None, dir.path())], quiet());
    let mut p = peer(&server).await;
    p.speak(ProtocolVersion::V2026_07_28);
    let templates = p
        .call(
            "resources/directory/read",
            json!({"uri": "skill://pdf/templates"}),
        )
        .await;
    let children = templates["result"]["resources"].as_array().unwrap();
    assert_eq!(children.len(), 2, "{templates}");
    assert_eq!(children[0]["uri"], "skill://pdf/templates/invoice.md");
    assert_eq!(children[1]["uri"], "skill://pdf/templates/regional");
    assert_eq!(children[1]["mimeType"], "inode/directory");
    let file = p
        .call(
            "resources/directory/read",
            json!({"uri": "skill://pdf/SKILL.md"}),
        )
        .await;
    assert_eq!(file["error"]["code"], -32602);
    let discover = p.call("server/discover", json!({})).await;
    assert_eq!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
}

#[tokio::test]
async fn a_changed_file_changes_its_digest_and_notifies_subscribers() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "notes/SKILL.md", skill_md("notes", "d"));
    write(dir.path(), "notes/today.md", "first");
    let server = server(
        vec![(None, dir.path())],
        SkillsConfig {
            poll_interval: Some(Duration::from_millis(100)),
            ..SkillsConfig::default()
        },
    );
    let mut p = peer(&server).await;
    let before = p
        .call("skills/get", json!({"uri": "skill://notes/SKILL.md"}))
        .await;
    let sub = p
        .call(
            "resources/subscribe",
            json!({"uri": "skill://notes/today.md"}),
        )
        .await;
    assert!(sub.get("result").is_some(), "{sub}");
    write(dir.path(), "notes/today.md", "second, longer");
    let note = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let m = p.recv().await;
            if m["method"] == "notifications/resources/updated" {
                return m;
            }
        }
    })
    .await
    .expect("an update arrives");
    assert_eq!(note["params"]["uri"], "skill://notes/today.md");
    let after = p
        .call("skills/get", json!({"uri": "skill://notes/SKILL.md"}))
        .await;
    let (b, a) = (
        &before["result"]["skill"]["resources"][1],
        &after["result"]["skill"]["resources"][1],
    );
    assert_ne!(b["digest"], a["digest"]);
    assert_eq!(a["digest"], sha(b"second, longer"));
    assert_eq!(a["size"], 14);
}
