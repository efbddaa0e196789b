//! `rsrc watch`: subscribes to resources and prints one line (or JSON object) per change
//! until interrupted or `--count` changes.
//!
//! Invariant: subscriptions the server refused are named on stderr, and a watch left with
//! nothing to report (every subscription refused, no `--list-changes`) fails (exit 1)
//! instead of waiting forever; Ctrl-C and `--count` end it with exit 0, a closed
//! connection with exit 2.

use std::io::IsTerminal;

use clap::Args;
use rsrc_client::Change;

use super::failure::Failure;
use super::output::{stdout_write, warn};
use super::render;
use super::target::Target;

#[derive(Args, Debug)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    target: Target,
    /// Also report changes to the list of resources.
    #[arg(long)]
    list_changes: bool,
    /// Print one JSON object per change.
    #[arg(long)]
    json: bool,
    /// Stop after this many changes (exit 0).
    #[arg(long, value_name = "N")]
    count: Option<u64>,
}
pub(super) async fn run(a: WatchArgs) -> Result<(), Failure> {
    let s = a.target.connect(None, "<URI>...").await?;
    let mut watch = s.client.watch(&s.args, a.list_changes).await?;
    let refused: Vec<&String> = s
        .args
        .iter()
        .filter(|u| !watch.accepted().contains(u))
        .collect();
    if !refused.is_empty() {
        let list: Vec<&str> = refused.iter().map(|s| s.as_str()).collect();
        warn(&format!(
            "the server will not report on {}",
            list.join(", ")
        ));
        if refused.len() == s.args.len() && !a.list_changes {
            return Err(Failure::Server(
                "the server accepted no subscription".into(),
            ));
        }
    }
    if std::io::stderr().is_terminal() {
        eprintln!(
            "watching {} resource(s); Ctrl-C stops",
            watch.accepted().len()
        );
    }
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let mut seen = 0u64;
    loop {
        if a.count.is_some_and(|n| seen >= n) {
            return Ok(());
        }
        tokio::select! {
            _ = &mut interrupted => return Ok(()),
            change = watch.next() => {
                let Some(change) = change else {
                    return Err(Failure::Usage("the server closed the connection".into()));
                };
                let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
                let line = match (&change, a.json) {
                    (Change::Updated(uri), true) => render::json_safe(
                        serde_json::json!({"time": now.to_string(), "change": "updated", "uri": uri}).to_string(),
                    ),
                    (Change::ListChanged, true) => {
                        serde_json::json!({"time": now.to_string(), "change": "list_changed"}).to_string()
                    }
                    (Change::Updated(uri), false) => {
                        format!("{now}  updated       {}", render::clean(uri))
                    }
                    (Change::ListChanged, false) => format!("{now}  list changed"),
                    _ => continue,
                };
                stdout_write(format!("{line}\n").as_bytes())?;
                seen += 1;
            }
        }
    }
}
