//! Names the source commit for `rsrc --version` (`build/commit.rs`), and lays out the
//! release `rsrc` binary so that it stays small in memory.
//!
//! The kernel maps a program's code in 64 KiB windows around each page it faults in. Left
//! to the linker's order, the few hundred functions a server runs are spread over nearly
//! every window of 13 MiB of code, so most of the code ends up resident. On Linux with
//! glibc, in release builds, this script has the linker place the functions listed in
//! `hot-text.txt` (made by `scripts/hot-text`) together before the rest of the code.
//! With `RSRC_PACK_RELOCS=on` it also packs the relative relocations the loader reads at
//! start (DT_RELR: less memory, but the binary then needs glibc 2.36 or later to start).
//!
//! Invariant: it only passes a linker argument with which rustc, given this build's own
//! flags and target (so the same linker), linked a small program without a warning, and
//! that program ran; otherwise the binary is linked as without this script. The layout
//! changes no behaviour, only where code lies. `RSRC_HOT_TEXT=off` turns it off.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "build/commit.rs"]
mod commit;
#[path = "build/hot_text.rs"]
mod hot_text;

fn main() {
    commit::emit(Path::new(
        &env::var("CARGO_MANIFEST_DIR").unwrap_or_default(),
    ));
    println!("cargo:rerun-if-changed=hot-text.txt");
    for name in ["RSRC_HOT_TEXT", "RSRC_PACK_RELOCS", "RUSTC_LINKER"] {
        println!("cargo:rerun-if-env-changed={name}");
    }
    let var = |name: &str| env::var(name).unwrap_or_default();
    let applies = var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("PROFILE") == "release"
        && var("TARGET") == var("HOST")
        && var("RSRC_HOT_TEXT") != "off";
    if !applies {
        return;
    }
    let out = PathBuf::from(var("OUT_DIR"));
    let list = fs::read_to_string("hot-text.txt").unwrap_or_default();
    let script = out.join("hot-text.ld");
    if fs::write(&script, hot_text::linker_script(&list)).is_err() {
        return;
    }
    // `-T` reaches the linker from the driver as one argument, whatever the path holds.
    let mut wanted = vec![format!("-T{}", script.display())];
    if var("RSRC_PACK_RELOCS") == "on" {
        wanted.push("-Wl,-z,pack-relative-relocs".to_owned());
    }
    for arg in wanted {
        if links_with(&arg, &out) {
            println!("cargo:rustc-link-arg-bin=rsrc={arg}");
        }
    }
}

/// Whether rustc, with this build's flags, target and linker, links an empty program with
/// the link argument `arg` (and no linker warning), and the program runs.
fn links_with(arg: &str, dir: &Path) -> bool {
    let source = dir.join("hot_text_probe.rs");
    let program = dir.join("hot-text-probe");
    if fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let mut rustc = Command::new(env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned()));
    rustc
        .arg("--target")
        .arg(env::var("TARGET").unwrap_or_default())
        .args(["--edition=2021", "-o"])
        .arg(&program)
        .arg(&source);
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    rustc.args(flags.split('\u{1f}').filter(|flag| !flag.is_empty()));
    if let Ok(linker) = env::var("RUSTC_LINKER") {
        rustc.arg(format!("-Clinker={linker}"));
    }
    rustc
        .arg(format!("-Clink-arg={arg}"))
        .arg("-Clink-arg=-Wl,--fatal-warnings")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    rustc.status().is_ok_and(|status| status.success())
        && Command::new(&program)
            .status()
            .is_ok_and(|status| status.success())
}
