//! `rsrc complete`: asks the server to complete one variable of a URI template, with the
//! variables already chosen (`--arg NAME=VALUE`).
//!
//! Invariant: stdout holds only the values, one a line (or the JSON); that the server has
//! more than it sent is said on stderr.

use std::collections::BTreeMap;

use clap::Args;

use super::failure::Failure;
use super::output::{print_json, stdout_write, warn};
use super::render;
use super::target::Target;

#[derive(Args, Debug)]
pub(crate) struct CompleteArgs {
    #[command(flatten)]
    target: Target,
    /// A variable already chosen, as `NAME=VALUE`; repeatable.
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = parse_pair)]
    context: Vec<(String, String)>,
    /// Print the completion as JSON.
    #[arg(long)]
    json: bool,
}
fn parse_pair(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| "expected NAME=VALUE".to_owned())
}
pub(super) async fn run(a: CompleteArgs) -> Result<(), Failure> {
    let s = a
        .target
        .connect(Some(3), "<URI-TEMPLATE> <VAR> <PREFIX>")
        .await?;
    let context: BTreeMap<String, String> = a.context.into_iter().collect();
    let completion = s
        .client
        .complete(&s.args[0], &s.args[1], &s.args[2], context)
        .await?;
    if a.json {
        return print_json(&completion);
    }
    let (values, more) = render::completion(&completion);
    stdout_write(values.as_bytes())?;
    if let Some(more) = more {
        warn(&more);
    }
    Ok(())
}
