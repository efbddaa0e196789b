//! The embedded default: a small sample compiled into the binary, served when `rsrc serve`
//! is given no source: a few documents at `sample:///` and a SQLite database,
//! `db://bookshop`, built in memory from `sample/bookshop.sql` at start.
//!
//! Invariant: it needs nothing from the machine it runs on (no files, no network), and
//! writes nothing (the database lives in memory and goes with the process).

use std::time::SystemTime;

use rsrc::protocol::{Icon, Resource};
use rsrc::{Representation, RequestContext, ResourceSet};
use rsrc_providers::db::sqlite::{SqliteConfig, SqliteError, SqliteProvider, SqliteSource};

/// The URI prefix of the sample.
pub(crate) const PREFIX: &str = "sample:///";

macro_rules! file {
    ($path:literal) => {
        include_str!(concat!("../sample/", $path))
    };
}

/// The name of the sample database: its URIs are `db://bookshop/…`.
pub(crate) const DATABASE: &str = "bookshop";

/// The sample database, built in memory. It never changes, so it is not watched.
pub(crate) fn database(config: &SqliteConfig) -> Result<SqliteProvider, SqliteError> {
    let config = SqliteConfig {
        watch: false,
        ..config.clone()
    };
    SqliteProvider::new(
        vec![SqliteSource::script(DATABASE, file!("bookshop.sql"))],
        config,
    )
}

/// The sample documents as a provider.
pub(crate) fn sample() -> ResourceSet {
    let started = SystemTime::now();
    let icon = Icon {
        src: "data:image/png;base64,iVBORw0KGgo=".into(),
        mime_type: Some("image/png".into()),
        sizes: Some(vec!["16x16".into()]),
        theme: None,
    };
    ResourceSet::new()
        .with_text(
            Resource::new("sample:///README.md", "README.md")
                .with_title("About this sample")
                .with_description(
                    "What the bundled sample contains and how to serve your own files",
                )
                .with_mime_type("text/markdown")
                .with_icons(vec![icon]),
            file!("README.md"),
        )
        .with_collection(
            Resource::new("sample:///guide", "guide")
                .with_title("Guide")
                .with_mime_type("inode/directory"),
        )
        .with_text(
            Resource::new("sample:///guide/getting-started.md", "getting-started.md")
                .with_title("Getting started")
                .with_mime_type("text/markdown"),
            file!("guide/getting-started.md"),
        )
        .with_text(
            Resource::new("sample:///guide/uri-schemes.md", "uri-schemes.md")
                .with_title("URI schemes")
                .with_mime_type("text/markdown"),
            file!("guide/uri-schemes.md"),
        )
        .with_representations(
            Resource::new("sample:///data/report", "report")
                .with_title("Quarterly report")
                .with_description(
                    "Structured data, with a Markdown rendering as a format alternative",
                )
                .with_mime_type("application/json"),
            vec![
                Representation::text(file!("data/report.json")),
                Representation::text(file!("data/report.md")).with_mime_type("text/markdown"),
            ],
        )
        .with_blob(
            Resource::new("sample:///images/logo.png", "logo.png")
                .with_title("Logo")
                .with_mime_type("image/png"),
            include_bytes!("../sample/images/logo.png").as_slice(),
        )
        .with_dynamic(
            Resource::new("sample:///status", "status")
                .with_title("Server status")
                .with_description("Computed on every read: uptime and the revision of the request")
                .with_mime_type("application/json"),
            move |ctx: RequestContext| async move {
                let uptime = started.elapsed().unwrap_or_default().as_secs();
                let body = serde_json::json!({
                    "server": "rsrc",
                    "version": env!("CARGO_PKG_VERSION"),
                    "uptime_seconds": uptime,
                    "protocol_version": ctx.protocol_version().as_str(),
                });
                Ok(vec![Representation::text(body.to_string())])
            },
        )
}
