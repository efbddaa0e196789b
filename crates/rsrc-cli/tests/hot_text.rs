//! The release binary's code layout (`build.rs`): the linker script made from
//! `hot-text.txt` holds what the linker needs, and the linkers a Rust build uses on Linux
//! (rustc's own `rust-lld`, and the GNU linker), given it, place the listed functions
//! before the others, also when a rebuild has changed their hashes.

#[path = "../build/hot_text.rs"]
mod hot_text;

use hot_text::{linker_script, loosen};

const LEGACY: &str = "_ZN4rsrc9transport5stdio8classify17hbedc201dfa57d1c3E";
const V0: &str = "_RNvMs0_NtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync4once5futexNtB5_4Once4call";

#[test]
fn a_legacy_rust_symbol_is_loosened_at_its_hash() {
    assert_eq!(loosen(LEGACY), "_ZN4rsrc9transport5stdio8classify17h*E");
}

#[test]
fn a_generic_closure_or_shim_keeps_its_hash() {
    for name in [
        "_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$8grow_one17h866b4f2bb28ed7e8E",
        "_ZN4rsrc5serve3run28_$u7b$$u7b$closure$u7d$$u7d$17hb81413ef312a518fE",
        "_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim$u7d$$u7d$17h0123456789abcdefE",
    ] {
        assert_eq!(loosen(name), name);
    }
}

#[test]
fn a_clones_number_is_left_open() {
    assert_eq!(
        loosen(
            "_RNvXsZ_NtCslNYArtu3iFV_5alloc6stringNtB5_6StringNtNtCsgEmfK2I1SDS_4core3fmt5Write9write_str.6468"
        ),
        "_RNvXsZ_NtCs*_5alloc6stringNtB5_6StringNtNtCs*_4core3fmt5Write9write_str.*"
    );
    assert_eq!(loosen("sqlite3Fault.12"), "sqlite3Fault.*");
}

#[test]
fn a_v0_rust_symbol_is_loosened_at_its_crate_disambiguators() {
    assert_eq!(
        loosen("_RINvNtCsgEmfK2I1SDS_4core3strNtCsjrHSEGnQ3l9_3std4pathE"),
        "_RINvNtCs*_4core3strNtCs*_3std4pathE"
    );
    assert_eq!(
        loosen(V0),
        "_RNvMs0_NtNtNtNtCs*_3std3sys4sync4once5futexNtB5_4Once4call"
    );
}

#[test]
fn other_names_stay_as_they_are() {
    for name in [
        "sqlite3VdbeExec",
        // Not a hash: too short, not hexadecimal, not at the end.
        "_ZN4rsrc4main17h0123E",
        "_ZN4rsrc4main17hzzzzzzzzzzzzzzzzE",
        "_ZN4rsrc17h0123456789abcdefE4mainE",
        "Cs_plain",
        "name.",
        "name.v2",
    ] {
        assert_eq!(loosen(name), name);
    }
}

#[test]
fn the_script_names_each_function_exactly_before_any_loosened_pattern() {
    let script = linker_script(&format!("# a comment\n\n{LEGACY}\n{V0}\nsqlite3VdbeExec\n"));
    let exact = script
        .find(&format!(".text.{LEGACY} "))
        .expect("the exact name");
    let loose = script
        .find(".text._ZN4rsrc9transport5stdio8classify17h*E ")
        .expect("the loosened name");
    assert!(exact < loose);
    assert!(script.contains(&format!(".text.unlikely.{V0} ")));
    assert!(script.contains(".text.sqlite3VdbeExec "));
    assert!(!script.contains(".text.sqlite3VdbeExec* "));
    assert!(!script.contains("comment"));
    assert!(script.trim_end().ends_with("INSERT BEFORE .text;"));
}

#[test]
fn names_a_linker_script_cannot_hold_are_left_out() {
    let script =
        linker_script("evil)\nspaced name\nwild*\nat@sign\nsemi;colon\nbrace{\nfine$1.2\n");
    assert!(script.contains(".text.fine$1.2 "));
    for bad in ["evil", "spaced", "wild", "at", "semi", "brace"] {
        assert!(!script.contains(bad), "{bad} in {script}");
    }
}

#[test]
fn every_committed_list_names_functions_only() {
    for (file, list) in [
        ("hot-text.txt", include_str!("../hot-text.txt")),
        ("hot-text-dist.txt", include_str!("../hot-text-dist.txt")),
    ] {
        let names: Vec<&str> = list
            .lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .collect();
        assert!(names.len() > 500, "{file}: {} names", names.len());
        let script = linker_script(list);
        for name in names {
            assert!(
                script.contains(&format!(".text.{name} ")),
                "{file}: {name} left out"
            );
        }
    }
}

/// Links a small C program whose functions carry Rust-like symbol names, with a script
/// made from a list written before a "rebuild" changed their hashes and disambiguators,
/// and checks the listed functions come before the one not listed: with the GNU linker,
/// and with the `rust-lld` that rustc links with.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_linkers_place_listed_functions_first_also_after_a_rebuild() {
    let rustc = |arg: &str| {
        let out = std::process::Command::new("rustc")
            .arg(arg)
            .output()
            .expect("rustc runs");
        String::from_utf8(out.stdout).unwrap()
    };
    let host = rustc("-vV")
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        .expect("rustc names its host");
    let gcc_ld = std::path::Path::new(rustc("--print=sysroot").trim())
        .join("lib/rustlib")
        .join(host)
        .join("bin/gcc-ld");
    assert!(gcc_ld.join("ld.lld").exists(), "no rust-lld in {gcc_ld:?}");
    link_and_check(&[]);
    link_and_check(&["-fuse-ld=lld".to_owned(), format!("-B{}", gcc_ld.display())]);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn link_and_check(linker: &[String]) {
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let rebuilt_legacy = "_ZN4rsrc9transport5stdio8classify17h0000000000000000E";
    let rebuilt_v0 = "_RNvMs0_NtNtNtNtCsAAAAAAAAAAA_3std3sys4sync4once5futexNtB5_4Once4call";
    let source = format!(
        "int cold_first(int x) {{ return x * 3; }}\n\
         int legacy(int x) __asm__(\"{rebuilt_legacy}\");\n\
         int legacy(int x) {{ return x + 1; }}\n\
         int v0(int x) __asm__(\"{rebuilt_v0}\");\n\
         int v0(int x) {{ return x + 2; }}\n\
         int exact_c(int x) {{ return x + 4; }}\n\
         int main(int argc, char **argv) {{ (void)argv; \
         return cold_first(argc) + legacy(argc) + v0(argc) + exact_c(argc) == 0; }}\n"
    );
    let c = dir.path().join("probe.c");
    std::fs::write(&c, source).unwrap();
    let script = dir.path().join("hot.ld");
    std::fs::write(
        &script,
        linker_script(&format!("{LEGACY}\n{V0}\nexact_c\nmain\n")),
    )
    .unwrap();
    let program = dir.path().join("probe");
    let linked = Command::new("cc")
        .args(["-O1", "-ffunction-sections", "-fno-inline", "-o"])
        .arg(&program)
        .arg(&c)
        .arg(format!("-T{}", script.display()))
        .args(linker)
        .stderr(Stdio::inherit())
        .status()
        .expect("cc runs");
    assert!(linked.success());
    assert!(Command::new(&program).status().unwrap().success());

    let symbols = Command::new("nm").arg(&program).output().expect("nm runs");
    let symbols = String::from_utf8(symbols.stdout).unwrap();
    let address = |name: &str| {
        symbols
            .lines()
            .find_map(|line| {
                let mut parts = line.split_whitespace();
                let address = u64::from_str_radix(parts.next()?, 16).ok()?;
                (parts.nth(1)? == name).then_some(address)
            })
            .unwrap_or_else(|| panic!("{name} not in\n{symbols}"))
    };
    let cold = address("cold_first");
    for hot in [rebuilt_legacy, rebuilt_v0, "exact_c", "main"] {
        assert!(address(hot) < cold, "{hot} after cold_first ({linker:?})");
    }
}
