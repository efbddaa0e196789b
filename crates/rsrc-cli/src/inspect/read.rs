//! `rsrc read`: a resource's content to stdout or a file (`-o`), a format alternative
//! picked with `--accept`, or the whole result as JSON.
//!
//! Invariant: what is written is the resource's bytes, except on a terminal: binary
//! content is refused there unless `--force`, and text is shown with its escape sequences
//! escaped, never obeyed. Progress goes to stderr, and only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use rsrc::protocol::Resource;
use rsrc::protocol::resources::{Body, ReadResourceResult};

use super::failure::{Failure, io_failure};
use super::output::{print_json, stdout_write};
use super::render;
use super::target::Target;

#[derive(Args, Debug)]
pub(crate) struct ReadArgs {
    #[command(flatten)]
    target: Target,
    /// Pick the format alternative of this MIME type (`text/plain`, `image/*`).
    #[arg(long, value_name = "MIME")]
    accept: Option<String>,
    /// Write the content to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write binary content to a terminal anyway.
    #[arg(long)]
    force: bool,
    /// Print the whole read result as JSON.
    #[arg(long, conflicts_with_all = ["accept", "output"])]
    json: bool,
}
/// Reads larger than this show a progress bar while being written.
const PROGRESS_BYTES: usize = 1024 * 1024;

pub(super) async fn run(a: ReadArgs) -> Result<(), Failure> {
    let s = a.target.connect(Some(1), "<URI>").await?;
    let uri = &s.args[0];
    let spinner = progress_spinner(&format!("reading {uri}"));
    let result = s.client.read(uri).await;
    spinner.finish_and_clear();
    let result = result?;
    if a.json {
        return print_json(&result);
    }
    let body = pick(&result, uri, a.accept.as_deref())?;
    let bytes: &[u8] = match body {
        Picked::Body(Body::Text(t)) => t.as_bytes(),
        Picked::Body(Body::Blob(b)) => b,
        Picked::Collection(children) => {
            return stdout_write(render::resources_table(&children).as_bytes());
        }
    };
    let binary = matches!(body, Picked::Body(Body::Blob(_)));
    match &a.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| io_failure(&format!("cannot create {}", path.display()), &e))?;
            write_with_progress(file, bytes)
                .map_err(|e| io_failure(&format!("cannot write {}", path.display()), &e))
        }
        None => {
            if binary && !a.force && std::io::stdout().is_terminal() {
                return Err(Failure::Usage(format!(
                    "{uri} is binary ({} bytes); write it with -o FILE, or pass --force",
                    bytes.len()
                )));
            }
            // Text shown on a terminal is shown, not obeyed: its escape sequences are
            // written as escapes (with --force, or to a pipe or file, it is byte for byte).
            let shown;
            let bytes = if !binary && !a.force && std::io::stdout().is_terminal() {
                shown = render::clean_text(std::str::from_utf8(bytes).unwrap_or_default());
                shown.as_bytes()
            } else {
                bytes
            };
            match write_with_progress(std::io::stdout().lock(), bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.map_err(|e| io_failure("cannot write to stdout", &e)),
            }
        }
    }
}

enum Picked<'a> {
    Body(&'a Body),
    /// A collection's read: its children.
    Collection(Vec<Resource>),
}

/// The entry to print: with `accept`, the alternative of that MIME type (a `type/*`
/// pattern allowed); otherwise the first entry for the requested URI. A read that
/// returned other URIs' contents (a collection) is shown as the list of them.
fn pick<'a>(
    result: &'a ReadResourceResult,
    uri: &str,
    accept: Option<&str>,
) -> Result<Picked<'a>, Failure> {
    let own: Vec<_> = result.contents.iter().filter(|c| c.uri() == uri).collect();
    if own.is_empty() || (accept.is_none() && result.contents.len() > own.len()) {
        if let Some(accept) = accept {
            return Err(Failure::Usage(format!(
                "{uri} is a collection; --accept {accept} picks among one document's formats"
            )));
        }
        return Ok(Picked::Collection(
            result.contents.iter().map(|c| c.resource.clone()).collect(),
        ));
    }
    let Some(accept) = accept else {
        return Ok(Picked::Body(&own[0].body));
    };
    let wanted = accept.to_ascii_lowercase();
    let matches = |mime: &str| {
        let mime = mime
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match wanted.strip_suffix("/*") {
            Some(top) => mime.split('/').next() == Some(top),
            None => mime == wanted,
        }
    };
    own.iter()
        .find(|c| c.resource.mime_type.as_deref().is_some_and(matches))
        .map(|c| Picked::Body(&c.body))
        .ok_or_else(|| {
            let offered: Vec<&str> = own
                .iter()
                .map(|c| c.resource.mime_type.as_deref().unwrap_or("(no type)"))
                .collect();
            Failure::Usage(format!(
                "{uri} has no {accept} alternative; it offers {}",
                offered.join(", ")
            ))
        })
}

fn progress_spinner(message: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner().with_message(message.to_owned());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Writes `bytes` in chunks, with a progress bar on a terminal's stderr for large ones.
fn write_with_progress(mut out: impl Write, bytes: &[u8]) -> std::io::Result<()> {
    let bar = if bytes.len() >= PROGRESS_BYTES && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(bytes.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} ({bytes_per_sec})",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    for chunk in bytes.chunks(256 * 1024) {
        out.write_all(chunk)?;
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    out.flush()
}
