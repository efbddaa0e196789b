//! `rsrc stat`: one resource's metadata: `resources/metadata` from a server that declares
//! rsrc's SEP-2093 extension (`dev.rsrc/resource-metadata`); from any other, the
//! resource's entry in the listing, else the entry its read returns
//! ([`rsrc_client::Client::describe`]).
//!
//! Invariant: a fallback is announced on stderr, and bounded by the page cap; a URI
//! neither listed nor readable is a server-side failure (exit 1).

use clap::Args;
use rsrc::protocol::resources::RESOURCE_METADATA_EXTENSION;
use rsrc_client::Via;

use super::failure::Failure;
use super::output::{print_json, stdout_write, warn};
use super::render;
use super::target::Target;

#[derive(Args, Debug)]
pub(crate) struct StatArgs {
    #[command(flatten)]
    target: Target,
    /// Print the metadata as JSON.
    #[arg(long)]
    json: bool,
}
pub(super) async fn run(a: StatArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(1), "<URI>").await?;
    let uri = s.args[0].clone();
    let found = s.client.describe(&uri, s.max_pages).await?;
    match found.via {
        Via::MetadataMethod => {}
        Via::Listing => warn(&format!(
            "the server does not declare {RESOURCE_METADATA_EXTENSION} (no resources/metadata): \
             showing the URI's entry in its listing"
        )),
        Via::Read => warn(&format!(
            "the server does not declare {RESOURCE_METADATA_EXTENSION} (no resources/metadata) \
             and does not list the URI: showing what reading it says"
        )),
    }
    if a.json {
        print_json(&found.resource)
    } else {
        stdout_write(render::resource_details(&found.resource).as_bytes())
    }
}
