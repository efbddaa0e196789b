//! The client and rsrc's SEP-2093 extension (`dev.rsrc/resource-metadata`): against a
//! server that declares it, `resources/metadata` and scoped listings are used; against
//! one that does not (the switch off), they are never sent, and `describe` and
//! `children` do without, in both eras.

#[path = "../../rsrc/tests/common/fixtures.rs"]
mod common;

use std::time::Duration;

use rsrc::protocol::resources::Feature;
use rsrc::protocol::{ProtocolVersion, ResourceTemplate};
use rsrc::{Representation, ResourceSet, Server, ServerConfig, TemplateResource};
use rsrc_client::{Client, ClientError, ClientOptions, EraPreference, Via};

use common::{server, server_with};

fn standard_server() -> Server {
    server_with(ServerConfig {
        resource_metadata: false,
        ..ServerConfig::default()
    })
}

/// A client of `server` in each era.
async fn clients(server: &Server) -> Vec<Client> {
    let mut out = Vec::new();
    for era in [
        EraPreference::Modern,
        EraPreference::Legacy(ProtocolVersion::V2025_11_25),
        EraPreference::Legacy(ProtocolVersion::V2025_06_18),
    ] {
        let options = ClientOptions {
            era,
            probe_timeout: Duration::from_millis(300),
            request_timeout: Duration::from_secs(5),
            ..ClientOptions::default()
        };
        out.push(Client::in_memory(server, options).await.unwrap());
    }
    out
}

#[tokio::test]
async fn a_declaring_server_is_asked_for_metadata_and_scoped_listings() {
    for client in clients(&server()).await {
        let v = client.protocol_version();
        let settings = client.resource_metadata().expect("declared");
        assert_eq!(settings.sep, 2093, "{v}");
        assert!(Feature::ALL.iter().all(|f| client.offers(*f)), "{v}");
        let described = client.describe("sample:///guide", 10).await.unwrap();
        assert_eq!(described.via, Via::MetadataMethod, "{v}");
        assert!(described.resource.is_collection(), "{v}");
        let children = client.children("sample:///guide", 10).await.unwrap();
        assert!(children.by_server, "{v}");
        let uris: Vec<&str> = children.items.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "sample:///guide/a.md",
                "sample:///guide/b.md",
                "sample:///guide/deep"
            ],
            "{v}"
        );
    }
}

#[tokio::test]
async fn a_server_without_the_extension_is_never_sent_its_calls() {
    for client in clients(&standard_server()).await {
        let v = client.protocol_version();
        assert!(client.resource_metadata().is_none(), "{v}");
        assert!(!client.offers(Feature::MetadataMethod), "{v}");
        for e in [
            client.metadata("sample:///README.md").await.unwrap_err(),
            client
                .list_resources(None, Some("sample:///guide".into()))
                .await
                .unwrap_err(),
        ] {
            let ClientError::NotOffered(why) = &e else {
                panic!("{v}: {e:?}");
            };
            assert!(why.contains("dev.rsrc/resource-metadata"), "{v}: {why}");
        }
        // The plain listing is still there.
        assert!(client.list_resources(None, None).await.is_ok(), "{v}");
    }
}

#[tokio::test]
async fn without_the_extension_describe_uses_the_listing_then_a_read() {
    for client in clients(&standard_server()).await {
        let v = client.protocol_version();
        let listed = client.describe("sample:///README.md", 10).await.unwrap();
        assert_eq!(listed.via, Via::Listing, "{v}");
        assert_eq!(listed.resource.title.as_deref(), Some("Read me"), "{v}");
        // No SEP-2093 member comes from a server that does not serve it.
        assert!(listed.resource.resource_type.is_none(), "{v}");
        // Neither listed nor readable: the read's error.
        let missing = client.describe("sample:///missing", 10).await.unwrap_err();
        assert!(missing.rpc().is_some(), "{v}: {missing:?}");
    }
    // A template's resource is not listed: reading it tells its type and size, and
    // nothing SEP-2093 adds.
    let users = TemplateResource::new(
        ResourceTemplate::new("db://users/{id}", "user").with_mime_type("application/json"),
        |_ctx, vars| async move {
            let id: u64 = vars.get("id")?;
            Ok(vec![Representation::text(format!(r#"{{"id":{id}}}"#))])
        },
    )
    .unwrap();
    let templated = Server::builder("t", "0")
        .mount("db:", ResourceSet::new().with_template(users))
        .resource_metadata(false)
        .build()
        .unwrap();
    for client in clients(&templated).await {
        let v = client.protocol_version();
        let read = client.describe("db://users/7", 10).await.unwrap();
        assert_eq!(read.via, Via::Read, "{v}");
        let r = &read.resource;
        assert_eq!(r.uri, "db://users/7", "{v}");
        assert_eq!(r.mime_type.as_deref(), Some("application/json"), "{v}");
        assert_eq!(r.size, Some(8), "{v}");
        assert!(r.name.is_empty() && r.resource_type.is_none(), "{v}: {r:?}");
    }
}

#[tokio::test]
async fn without_the_extension_children_are_what_the_listing_holds_below() {
    for client in clients(&standard_server()).await {
        let v = client.protocol_version();
        let children = client.children("sample:///guide", 10).await.unwrap();
        assert!(!children.by_server, "{v}");
        let uris: Vec<&str> = children.items.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "sample:///guide/a.md",
                "sample:///guide/b.md",
                "sample:///guide/deep",
                "sample:///guide/deep/c.md"
            ],
            "{v}"
        );
    }
}
