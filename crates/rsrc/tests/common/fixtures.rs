//! A server with one of every kind of resource (texts, a blob, a template, a paged
//! provider with completions and logs), for the tests of every crate that talks to the
//! engine. Invariant: it needs only `rsrc`, so any crate's tests can include it.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use rsrc::protocol::{LoggingLevel, Resource, ResourceTemplate};
use rsrc::{
    CompleteRequest, ListRequest, Page, Provider, ReadOutput, Representation, RequestContext,
    ResourceError, ResourceSet, Server, ServerBuilder, ServerConfig,
};

/// PNG signature plus a few bytes: not UTF-8.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR";

pub fn sample_set() -> ResourceSet {
    ResourceSet::new()
        .with_text(
            Resource::new("sample:///README.md", "README.md")
                .with_title("Read me")
                .with_mime_type("text/markdown")
                .with_last_modified("2025-01-12T15:00:58Z"),
            "# Sample\n",
        )
        .with_blob(
            Resource::new("sample:///logo.png", "logo.png").with_mime_type("image/png"),
            PNG,
        )
        .with_representations(
            Resource::new("sample:///report.pdf", "Quarterly Report")
                .with_mime_type("application/pdf"),
            vec![
                Representation::blob(b"%PDF-1.4 fake".to_vec()),
                Representation::text("Extracted text").with_mime_type("text/plain"),
            ],
        )
        .with_collection(
            Resource::new("sample:///guide", "guide").with_mime_type("inode/directory"),
        )
        .with_text(Resource::new("sample:///guide/a.md", "a.md"), "A")
        .with_text(Resource::new("sample:///guide/b.md", "b.md"), "BB")
        .with_collection(Resource::new("sample:///guide/deep", "deep"))
        .with_text(Resource::new("sample:///guide/deep/c.md", "c.md"), "C")
        .with_collection(Resource::new("sample:///empty", "empty"))
        .with_dynamic(
            Resource::new("sample:///clock", "clock"),
            |ctx: RequestContext| async move {
                Ok(vec![Representation::text(format!(
                    "revision {}",
                    ctx.protocol_version()
                ))])
            },
        )
        .with_dynamic(Resource::new("sample:///panic", "panic"), |_| async {
            panic!("provider bug")
        })
        .with_dynamic(
            Resource::new("sample:///slow", "slow"),
            |ctx: RequestContext| async move {
                for i in 1..=100 {
                    ctx.report_progress(f64::from(i), Some(100.0), Some("working"));
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Ok(vec![Representation::text("done")])
            },
        )
        .with_dynamic(
            Resource::new("sample:///noisy", "noisy"),
            |ctx: RequestContext| async move {
                let (info, error) = (LoggingLevel::Info, LoggingLevel::Error);
                ctx.log(info, Some("noisy"), serde_json::json!("info line"));
                ctx.log(error, Some("noisy"), serde_json::json!({"error": "bad"}));
                Ok(vec![Representation::text("noise")])
            },
        )
        .with_dynamic(
            Resource::new("sample:///progress", "progress"),
            |ctx: RequestContext| async move {
                ctx.report_progress(1.0, Some(2.0), None);
                ctx.report_progress(2.0, Some(2.0), Some("done"));
                Ok(vec![Representation::text("ok")])
            },
        )
}

/// A provider with `n` numbered resources, to exercise pagination across mounts.
pub struct Numbers {
    pub scheme: &'static str,
    pub n: usize,
}

impl Numbers {
    fn uri(&self, i: usize) -> String {
        format!("{}:///{i:06}", self.scheme)
    }
}

impl Provider for Numbers {
    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![ResourceTemplate::new(
            format!("{}:///{{n}}", self.scheme),
            "numbers",
        )]
    }

    async fn list(&self, _: &RequestContext, req: ListRequest<'_>) -> Result<Page, ResourceError> {
        if let Some(parent) = req.parent {
            return Err(ResourceError::not_a_collection(parent));
        }
        let start = match req.after {
            None => 0,
            Some(b) => std::str::from_utf8(b).unwrap().parse::<usize>().unwrap() + 1,
        };
        let end = self.n.min(start + req.limit);
        Ok(Page {
            resources: (start..end)
                .map(|i| Resource::new(self.uri(i), format!("{i}")).document().into())
                .collect(),
            next: (end < self.n).then(|| (end - 1).to_string().into_bytes()),
            cache: None,
        })
    }

    async fn metadata(&self, _: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        Err(ResourceError::not_found(uri))
    }

    async fn read(&self, _: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        Err(ResourceError::not_found(uri))
    }

    async fn complete(
        &self,
        _: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<rsrc::protocol::Completion, ResourceError> {
        let values = (0..self.n)
            .map(|i| format!("{i:06}"))
            .filter(|v| v.starts_with(req.value))
            .collect();
        Ok(rsrc::protocol::Completion::from_matches(values))
    }
}

/// The test server's builder with its two mounts: `sample:` and 25 numbers under `num:`.
pub fn builder() -> ServerBuilder {
    Server::builder("rsrc-test", "0.0.0")
        .mount("sample:", sample_set())
        .mount(
            "num:",
            Numbers {
                scheme: "num",
                n: 25,
            },
        )
}

pub fn server_with(config: ServerConfig) -> Server {
    builder()
        .instructions("test server")
        .config(config)
        .build()
        .unwrap()
}

pub fn server() -> Server {
    server_with(ServerConfig::default())
}
