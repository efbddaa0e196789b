//! Names the source commit for `rsrc --version` (`build/commit.rs`), and lays out the
//! release `rsrc` binary so that it stays small in memory.
//!
//! The kernel maps a program's code in 64 KiB windows around each page it faults in. Left
//! to the linker's order, the few hundred functions a server runs are spread over nearly
//! every window of 13 MiB of code, so most of the code ends up resident. On Linux with
//! glibc, in release builds, this script has the linker place the functions listed in
//! `hot-text.txt` (`hot-text-<profile>.txt` for another profile that has one, such as
//! `dist`; made by `scripts/hot-text PROFILE`) together before the rest of the code, and
//! warns when the list no longer names the functions of the last binary built with that
//! profile (`build/stale.rs`).
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
#[path = "build/stale.rs"]
mod stale;

fn main() {
    commit::emit(Path::new(
        &env::var("CARGO_MANIFEST_DIR").unwrap_or_default(),
    ));
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
    // OUT_DIR is `<target>/[<triple>/]<profile>/build/rsrc-cli-<hash>/out`: the folder of
    // the profile (`release`, `dist`, …) is three levels up.
    let profile_dir = out.ancestors().nth(3);
    let profile = profile_dir
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .unwrap_or("release")
        .to_owned();
    // Symbol names differ per profile (cargo's crate hashes, fat LTO's inlining and
    // renaming), so each profile has its list; `release`, and a profile without its own,
    // take `hot-text.txt`.
    let own = format!("hot-text-{profile}.txt");
    let list_path = if profile != "release" && Path::new(&own).is_file() {
        own
    } else {
        "hot-text.txt".to_owned()
    };
    println!("cargo:rerun-if-changed={list_path}");
    let list = fs::read_to_string(&list_path).unwrap_or_default();
    if let Some(dir) = profile_dir {
        stale::warn_if_stale(&list, &list_path, &dir.join("rsrc"), &profile);
    }
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
