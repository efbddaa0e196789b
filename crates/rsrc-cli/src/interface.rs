//! What `rsrc` tells about its own interface: shell completions and manual pages, both
//! generated from the same clap definitions that parse its arguments, so they cannot
//! drift from them.
//!
//! Invariant: only visible commands get a page; every page is roff, written whole or not
//! at all (a failed write names the file).

use std::io::Write;
use std::path::{Path, PathBuf};

/// The shells completions are generated for.
pub(crate) use clap_complete::Shell;

/// Writes `shell`'s completion script for `command` to stdout.
pub(crate) fn completions(shell: Shell, mut command: clap::Command) -> std::io::Result<()> {
    let name = command.get_name().to_owned();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, name, &mut out);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out)?;
    stdout.flush()
}

/// Writes `command`'s manual page to stdout or, with `dir`, one page per visible command
/// (`rsrc.1`, `rsrc-serve.1`, …) into `dir`, and gives the files written.
pub(crate) fn manual(command: clap::Command, dir: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let command = command.disable_help_subcommand(true);
    let Some(dir) = dir else {
        let page = render(command).map_err(|e| e.to_string())?;
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(&page)
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("cannot write the page: {e}"))?;
        return Ok(Vec::new());
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut pages = vec![(command.get_name().to_owned(), command.clone())];
    let root = command.get_name().to_owned();
    let version = command.get_version().map(str::to_owned);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("{root}-{}", sub.get_name());
        // Each page names the version, as the main one does.
        let mut sub = sub.clone().name(name.clone());
        if let Some(version) = &version {
            sub = sub.version(version.clone());
        }
        pages.push((name, sub));
    }
    let mut written = Vec::new();
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        let text = render(page).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

fn render(command: clap::Command) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    Ok(out)
}
