//! `rsrc serve`: build the server from the sources on the command line and serve it.
//!
//! Invariant: on stdio the whole server runs on one thread (a current-thread runtime), so
//! a request is decoded, served and encoded without a thread hop.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use rsrc::transport::{StreamConfig, serve_stdio};
use rsrc::{Server, ServerConfig};
use rsrc_providers::fs::{self, FilterConfig, FsConfig, FsProvider};

/// Options of `rsrc serve`.
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// What to serve: directories, as `DIR` or `NAME=DIR`. With one directory a file's URI
    /// is `file:///<path>`; with several, `file:///<NAME>/<path>` (NAME defaults to the
    /// directory's name). With none, a bundled sample is served.
    sources: Vec<String>,

    /// Serve hidden files and directories (names starting with `.`).
    #[arg(long)]
    hidden: bool,

    /// Do not honour `.gitignore` and `.ignore` files.
    #[arg(long)]
    no_ignore: bool,

    /// Serve only files matching this glob (relative to the root, e.g. `**/*.md`); repeatable.
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,

    /// Never serve files or directories matching this glob; repeatable.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,

    /// Largest file read (e.g. `32MiB`); larger files are refused.
    #[arg(long, default_value = "32MiB", value_parser = parse_size)]
    max_read: u64,

    /// Most bytes of child content returned when a directory is read.
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    collection_budget: u64,

    /// Resources per `resources/list` page.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    page_size: u32,

    /// Longest accepted message (e.g. `16MiB`).
    #[arg(long, default_value = "16MiB", value_parser = parse_size)]
    max_message: u64,

    /// Most requests handled at once per connection.
    #[arg(long, default_value_t = 128)]
    max_in_flight: usize,

    /// How long requests in flight may finish after stdin closes.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    shutdown_grace: Duration,
}

/// Parses `1024`, `64KiB`, `32MiB`, `1GiB` (also `K`, `M`, `G`, `KB`, `MB`, `GB` as
/// powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("not a size: {s:?}"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(format!("unknown size unit {other:?} (use KiB, MiB or GiB)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

const INSTRUCTIONS: &str = "This server exposes resources. Use resources/list to browse, \
resources/list with a collection's uri to list its children, resources/metadata for \
metadata without content, and resources/read for content.";

/// One directory to serve, named.
fn directory(arg: &str) -> Result<(String, PathBuf), String> {
    let as_path = Path::new(arg);
    if !as_path.exists()
        && let Some((name, dir)) = arg.split_once('=')
    {
        return Ok((name.to_owned(), PathBuf::from(dir)));
    }
    if !as_path.is_dir() {
        return Err(format!("{arg}: not a directory"));
    }
    Ok((fs::default_root_name(as_path), as_path.to_path_buf()))
}

fn build(args: &ServeArgs) -> Result<Server, Box<dyn std::error::Error>> {
    let config = ServerConfig {
        page_size: args.page_size as usize,
        ..ServerConfig::default()
    };
    let mut builder = Server::builder("rsrc", env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .config(config);
    if args.sources.is_empty() {
        builder = builder.mount(crate::sample::PREFIX, crate::sample::sample());
    } else {
        let dirs = args
            .sources
            .iter()
            .map(|s| directory(s))
            .collect::<Result<Vec<_>, _>>()?;
        let fs_config = FsConfig {
            filter: FilterConfig {
                include_hidden: args.hidden,
                respect_ignore_files: !args.no_ignore,
                include: args.include.clone(),
                exclude: args.exclude.clone(),
            },
            max_read: args.max_read,
            collection_budget: args.collection_budget,
            ..FsConfig::default()
        };
        builder = builder.mount(fs::PREFIX, FsProvider::new(dirs, fs_config)?);
    }
    Ok(builder.build()?)
}

pub(crate) fn run(args: &ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let server = build(args)?;
    let stream = StreamConfig {
        max_line: usize::try_from(args.max_message).unwrap_or(usize::MAX),
        max_in_flight: args.max_in_flight.max(1),
        shutdown_grace: args.shutdown_grace,
        ..StreamConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        tracing::info!("serving MCP on stdio");
        serve_stdio(&server, &stream).await
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("32MiB"), Ok(32 << 20));
        assert_eq!(parse_size("1 GiB"), Ok(1 << 30));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999999GiB").is_err());
    }
}
