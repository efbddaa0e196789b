//! `rsrc stat`: one resource's metadata (`resources/metadata`, or, from a server without
//! it, the resource's entry in the listing).
//!
//! Invariant: the fallback is announced on stderr and bounded by the page cap; a URI
//! the listing does not hold is a server-side failure (exit 1).

use clap::Args;
use futures_util::StreamExt;
use rsrc::protocol::Resource;

use super::target::{Session, Target};
use super::{Failure, print_json, render, stdout_write, warn};

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
    let resource = match s.client.metadata(&uri).await {
        Ok(r) => r,
        Err(e) if e.is_method_not_found() => {
            warn("the server has no resources/metadata; looking the URI up in its listing");
            find_in_listing(&s, &uri).await?
        }
        Err(e) => return Err(e.into()),
    };
    if a.json {
        print_json(&resource)
    } else {
        stdout_write(render::resource_details(&resource).as_bytes())
    }
}

async fn find_in_listing(s: &Session, uri: &str) -> Result<Resource, Failure> {
    let mut stream = std::pin::pin!(s.client.resources(None, s.max_pages));
    while let Some(item) = stream.next().await {
        let r = item?;
        if r.uri == uri {
            return Ok(r);
        }
    }
    Err(Failure::Server(format!(
        "{uri} is not in the server's listing"
    )))
}
