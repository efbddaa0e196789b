//! What a declaration can get wrong and what the framework does about it: declarations in
//! any order, typed list items (and hand-written items the template cannot name, left
//! out with an error in the log), URIs outside their mount prefix refused at build, and
//! template values that must not reach a handler (NUL, encoded `/` in a segment,
//! path-shaped values). Raw JSON on the wire, every message schema-validated by the peer.
#![cfg(feature = "macros")]
#![allow(clippy::needless_pass_by_value)]

mod common;

use rsrc::declare::{IntoContent, ListItem, Options, RelativePath, Resources};
use rsrc::protocol::{ProtocolVersion, ResourceTemplate};
use rsrc::{BuildError, DeclareError, Server, resources};
use serde_json::json;

const V: ProtocolVersion = ProtocolVersion::V2025_11_25;

struct Files;

#[resources]
impl Files {
    // The list and the completion come before the resource they name: order does not
    // matter.
    #[list(file)]
    fn files(&self) -> Vec<FileItem> {
        vec![FileItem {
            path: "docs/a b.md".parse().unwrap(),
        }]
    }

    #[complete(file, path)]
    fn paths(&self) -> Vec<&str> {
        vec!["docs/a b.md", "notes.txt"]
    }

    #[resource(uri = "files://root/{+path}")]
    fn file(&self, path: RelativePath) -> String {
        path.join_to("/srv/files").display().to_string()
    }

    #[resource(uri = "files://segments{/segs*}")]
    fn segments(&self, segs: Vec<String>) -> String {
        segs.join("|")
    }

    #[list(segments)]
    fn all_segments(&self) -> Vec<ListItem<SegmentsItem>> {
        vec![
            SegmentsItem {
                segs: vec!["x".into(), "y z".into()],
            }
            .title("two"),
        ]
    }

    #[resource(uri = "files://names/{name}")]
    fn name(&self, name: String) -> String {
        format!("{} bytes", name.len())
    }

    #[resource(uri = "files://raw/{name}", allow_nul)]
    fn raw(&self, name: String) -> String {
        format!("{} bytes", name.len())
    }

    #[resource(uri = "files://rows/{table}/{key}{?rev}")]
    fn row(&self, table: String, key: u64, rev: Option<u32>) -> String {
        format!("{table} {key} {rev:?}")
    }

    #[list(row)]
    fn rows(&self) -> Vec<RowItem> {
        vec![
            RowItem {
                table: "books".into(),
                key: 7,
                rev: None,
            },
            RowItem {
                table: "books".into(),
                key: 8,
                rev: Some(2),
            },
        ]
    }

    #[resource(uri = "files://ids/{id}")]
    fn id(&self, id: u32) -> String {
        id.to_string()
    }

    // A one-variable template takes its variable's values directly.
    #[list(id)]
    fn ids(&self) -> Vec<u32> {
        vec![3, 1]
    }
}

fn server() -> Server {
    Server::builder("files", "1")
        .mount("files:", Files)
        .build()
        .unwrap()
}

#[tokio::test]
async fn lists_and_completions_declared_before_their_resource_are_attached() {
    let mut p = common::connect_as(&server(), V).await;
    let r = p.request("resources/list", json!({})).await;
    assert_eq!(
        common::listed_uris(&r),
        [
            "files://ids/1",
            "files://ids/3",
            "files://root/docs/a%20b.md",
            "files://rows/books/7",
            "files://rows/books/8?rev=2",
            "files://segments/x/y%20z",
        ]
    );
    let r = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "files://root/{+path}"},
                   "argument": {"name": "path", "value": "d"}}),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["docs/a b.md"]));
}

#[tokio::test]
async fn typed_items_read_back_as_the_values_they_were_built_with() {
    let mut p = common::connect_as(&server(), V).await;
    for (uri, text) in [
        ("files://rows/books/8?rev=2", "books 8 Some(2)"),
        ("files://segments/x/y%20z", "x|y z"),
        ("files://root/docs/a%20b.md", "/srv/files/docs/a b.md"),
    ] {
        let r = common::read(&mut p, uri).await;
        assert_eq!(r["result"]["contents"][0]["text"], text, "{uri}: {r}");
    }
    let r = p.request("resources/list", json!({})).await;
    let two = r["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "files://segments/x/y%20z")
        .unwrap();
    assert_eq!(two["title"], "two");
}

#[tokio::test]
async fn a_relative_path_parameter_never_receives_a_way_out() {
    let mut p = common::connect_as(&server(), V).await;
    for uri in [
        "files://root/../etc/passwd",
        "files://root/docs/../../x",
        "files://root//etc/passwd",
        "files://root/a%00b",
        "files://root/./a",
        "files://segments/..%2F..%2Fetc",
        "files://segments/a%2Fb",
    ] {
        let r = common::read(&mut p, uri).await;
        assert_eq!(r["error"]["code"], -32002, "{uri}: {r}");
        assert_eq!(r["error"]["data"]["uri"], uri);
    }
}

#[tokio::test]
async fn a_value_holding_nul_is_not_found_unless_the_resource_allows_it() {
    let mut p = common::connect_as(&server(), V).await;
    let r = common::read(&mut p, "files://names/a%00b").await;
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let r = common::read(&mut p, "files://raw/a%00b").await;
    assert_eq!(r["result"]["contents"][0]["text"], "3 bytes", "{r}");
}

#[tokio::test]
async fn a_hand_written_item_the_template_cannot_name_is_left_out_of_the_listing() {
    let set = Resources::new(())
        .list("t://rows/{table}/{key}", |_, _| async {
            Ok(vec![
                ListItem::vars([("tabel", "books"), ("key", "1")]),
                ListItem::new("only-one-value"),
                ListItem::vars([("table", "books"), ("key", "2")]),
            ])
        })
        .template(
            ResourceTemplate::new("t://rows/{table}/{key}", "row"),
            Options::new(),
            |_, _, _| async { "row".into_content() },
        );
    let server = Server::builder("t", "0").mount("t:", set).build().unwrap();
    let mut p = common::connect_as(&server, V).await;
    let r = p.request("resources/list", json!({})).await;
    assert_eq!(common::listed_uris(&r), ["t://rows/books/2"]);
}

#[test]
fn a_uri_outside_the_mount_prefix_fails_the_build_naming_both() {
    let err = Server::builder("files", "1")
        .mount("file:", Files)
        .build()
        .unwrap_err();
    let BuildError::Declaration { prefix, error } = &err else {
        panic!("{err}");
    };
    assert_eq!(prefix, "file:");
    assert!(
        matches!(error, DeclareError::OutsideMount { uri, prefix } if uri.starts_with("files://") && prefix == "file:"),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("\"file:\"") && text.contains("files://"),
        "{text}"
    );

    let fixed = Resources::new(()).resource(
        rsrc::protocol::Resource::new("notion://workspace/info", "info"),
        Options::new(),
        |_, _| async { "x".into_content() },
    );
    let err = Server::builder("t", "0")
        .mount("foo:", fixed)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("notion://workspace/info"), "{err}");
    // A template may begin with part of the prefix: its expansions can still start with it.
    let partial = Resources::new(()).template(
        ResourceTemplate::new("db://{name}/tables", "tables"),
        Options::new(),
        |_, _, _| async { "x".into_content() },
    );
    assert!(
        Server::builder("t", "0")
            .mount("db://shop", partial)
            .build()
            .is_ok()
    );
}

#[test]
fn a_declaration_error_reaching_main_prints_its_message_not_its_structure() {
    let err = Server::builder("files", "1")
        .mount("file:", Files)
        .build()
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("mount the provider at a prefix of its URIs"),
        "{message}"
    );
    // `fn main() -> Result<(), E>` prints `Error: {err:?}`, whether `E` is the error itself
    // or the `Box<dyn Error>` that `?` makes of it.
    assert_eq!(format!("{err:?}"), message);
    let boxed: Box<dyn std::error::Error> = err.clone().into();
    assert_eq!(format!("{boxed:?}"), message);
    assert!(!format!("{err:?}").contains("OutsideMount"));
    let BuildError::Declaration { error, .. } = err else {
        panic!("{err}");
    };
    assert_eq!(format!("{error:?}"), error.to_string());

    let template_error = rsrc::TemplateError::UnknownVariable("pageId".into());
    assert_eq!(format!("{template_error:?}"), template_error.to_string());
    let duplicate = Server::builder("t", "0")
        .mount(
            "t:",
            Resources::new(())
                .resource(
                    rsrc::protocol::Resource::new("t:x", "x"),
                    Options::new(),
                    |_, _| async { "x".into_content() },
                )
                .resource(
                    rsrc::protocol::Resource::new("t:x", "x"),
                    Options::new(),
                    |_, _| async { "x".into_content() },
                ),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        format!("{duplicate:?}"),
        "the provider mounted at \"t:\" is invalid: t:x is declared twice"
    );
}
