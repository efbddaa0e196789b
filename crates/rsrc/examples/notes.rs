//! A `ResourceSet` without the macro: two resources, one static and one computed, served
//! on stdio, with the server's logs on stderr.

use rsrc::protocol::Resource;
use rsrc::transport::{StreamConfig, serve_stdio};
use rsrc::{Representation, ResourceSet, Server};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let notes = ResourceSet::new()
        .with_text(
            Resource::new("notes:///todo.md", "todo.md").with_mime_type("text/markdown"),
            "- write the provider\n",
        )
        .with_dynamic(Resource::new("notes:///now", "now"), |_ctx| async {
            Ok(vec![Representation::text(format!(
                "{:?}",
                std::time::SystemTime::now()
            ))])
        });
    let server = Server::builder("notes", "1.0")
        .mount("notes:", notes)
        .build()?;
    serve_stdio(&server, &StreamConfig::default()).await?;
    Ok(())
}
