//! `rsrc templates`: the server's resource templates, as a table or JSON.
//!
//! Invariant: the listing follows cursors under the page cap; any error fails the command
//! rather than printing a partial table.

use clap::Args;
use futures_util::StreamExt;

use super::failure::Failure;
use super::output::{print_json, stdout_write};
use super::render;
use super::target::Target;

#[derive(Args, Debug)]
pub(crate) struct TemplatesArgs {
    #[command(flatten)]
    target: Target,
    /// Print JSON (an array of templates).
    #[arg(long)]
    json: bool,
}
pub(super) async fn run(a: TemplatesArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(0), "").await?;
    let mut items = Vec::new();
    let mut stream = std::pin::pin!(s.client.templates(s.max_pages));
    while let Some(item) = stream.next().await {
        items.push(item?);
    }
    if a.json {
        print_json(&items)
    } else {
        stdout_write(render::templates_table(&items).as_bytes())
    }
}
