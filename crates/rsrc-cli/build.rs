//! Lays out the release `rsrc` binary so that it stays small in memory.
//!
//! The kernel maps a program's code in 64 KiB windows around each page it faults in. Left
//! to the linker's order, the few hundred functions a server runs are spread over nearly
//! every window of 13 MiB of code, so most of the code ends up resident. On Linux with the
//! GNU toolchain, in release builds, this script has the linker place the functions
//! listed in `hot-text.txt` (made by `scripts/hot-text`) together before the rest of the
//! code, and pack the relative relocations the loader reads at start (DT_RELR).
//!
//! Invariant: it only passes the linker arguments a test link with the same linker showed
//! it accepts, and whose program ran; otherwise the binary is linked as without this
//! script. The layout changes no behaviour, only where code lies. `RSRC_HOT_TEXT=off`
//! turns it off.

use std::env;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "build/hot_text.rs"]
mod hot_text;

fn main() {
    println!("cargo:rerun-if-changed=hot-text.txt");
    println!("cargo:rerun-if-env-changed=RSRC_HOT_TEXT");
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
    let linker = Linker::from_env();
    // `-T` reaches the linker from the driver as one argument, whatever the path holds.
    let order = format!("-T{}", script.display());
    let packed = "-Wl,-z,pack-relative-relocs";
    for args in [&[order.as_str(), packed][..], &[order.as_str()], &[packed]] {
        if linker.accepts(args, &out) {
            for arg in args {
                println!("cargo:rustc-link-arg-bin=rsrc={arg}");
            }
            return;
        }
    }
}

/// The C compiler driver rustc links with, and the link arguments the build passes it.
struct Linker {
    program: String,
    args: Vec<String>,
}

impl Linker {
    fn from_env() -> Self {
        let mut program = env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
        let mut args = Vec::new();
        let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
        let mut flags = flags.split('\u{1f}').filter(|flag| !flag.is_empty());
        while let Some(flag) = flags.next() {
            let flag = match flag {
                "-C" | "--codegen" => flags.next().unwrap_or_default().to_owned(),
                other => other.trim_start_matches("-C").to_owned(),
            };
            if let Some(linker) = flag.strip_prefix("linker=") {
                program = linker.to_owned();
            } else if let Some(arg) = flag.strip_prefix("link-arg=") {
                args.push(arg.to_owned());
            } else if let Some(list) = flag.strip_prefix("link-args=") {
                args.extend(list.split_whitespace().map(str::to_owned));
            }
        }
        Linker { program, args }
    }

    /// Whether a small C program links with `extra` (and no warning) and then runs.
    fn accepts(&self, extra: &[&str], dir: &Path) -> bool {
        let program = dir.join("hot-text-probe");
        let mut compile = Command::new(&self.program);
        compile
            .args(["-x", "c", "-", "-o"])
            .arg(&program)
            .args(&self.args)
            .args(extra)
            .arg("-Wl,--fatal-warnings")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let Ok(mut child) = compile.spawn() else {
            return false;
        };
        let source = b"int main(void) { return 0; }\n";
        let fed = child
            .stdin
            .take()
            .is_some_and(|mut stdin| stdin.write_all(source).is_ok());
        let linked = child.wait().is_ok_and(|status| status.success());
        fed && linked
            && Command::new(&program)
                .status()
                .is_ok_and(|status| status.success())
    }
}
