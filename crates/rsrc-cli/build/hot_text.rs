//! The linker script that gathers the functions named in `hot-text.txt` (see `build.rs`).
//!
//! Invariant: every listed name is matched exactly first, then, where a rebuild changes
//! only a part of it that tells one function from another by accident (a hash, a crate
//! disambiguator, a clone's number), with that part left open; in every section the
//! compiler may give that function. Names with characters a linker script could read
//! otherwise are skipped, never passed on.

/// The linker script: an output section placed before `.text` that takes the listed
/// functions first by exact name, then by the same names loosened (see [`loosen`]), so a
/// list made before a dependency or compiler update still gathers most of the code it
/// names. Each name is matched in the sections the compiler may give it
/// (`.text.unlikely.` for cold functions, and so on).
pub(crate) fn linker_script(list: &str) -> String {
    let names = listed(list);
    let mut loose: Vec<String> = names.iter().map(|name| loosen(name)).collect();
    loose.sort();
    loose.dedup();
    loose.retain(|pattern| pattern.contains('*'));
    let mut script = String::from("SECTIONS\n{\n  .text_hot :\n  {\n");
    for name in names
        .iter()
        .copied()
        .chain(loose.iter().map(String::as_str))
    {
        script.push_str("    *(");
        for prefix in [".text.", ".text.unlikely.", ".text.hot.", ".text.startup."] {
            script.push_str(prefix);
            script.push_str(name);
            script.push(' ');
        }
        script.push_str(")\n");
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    script
}

/// The names the list gives the linker: one a line, without comments and blank lines, and
/// without names holding characters a linker script could read otherwise.
pub(crate) fn listed(list: &str) -> Vec<&str> {
    list.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter(|name| {
            name.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.$".contains(&b))
        })
        .collect()
}

/// A symbol with the parts a rebuild may change replaced by `*`: the number LLVM gives a
/// clone (`name.1234`), the `17h<16 hex>E` hash that ends a legacy Rust symbol, and the
/// `Cs<base 62>_` crate disambiguators of a v0 one (`_R…`). A legacy symbol of a generic
/// function, a closure or a shim keeps its hash: there the hash is what tells its many
/// instances apart, and all of them would match. Other names come back as they are.
pub(crate) fn loosen(name: &str) -> String {
    let mut name = match name.rsplit_once('.') {
        Some((base, clone))
            if !base.is_empty()
                && !clone.is_empty()
                && clone.bytes().all(|b| b.is_ascii_digit()) =>
        {
            format!("{base}.*")
        }
        _ => name.to_owned(),
    };
    let generic = ["$LT$", "$u7b$$u7b$closure$u7d$$u7d$", "vtable.shim"]
        .iter()
        .any(|part| name.contains(part));
    if let Some(start) = name.len().checked_sub(20)
        && name.starts_with("_ZN")
        && !generic
    {
        let tail = &name.as_bytes()[start..];
        if tail.starts_with(b"17h")
            && tail.ends_with(b"E")
            && tail[3..19].iter().all(u8::is_ascii_hexdigit)
        {
            name.replace_range(start + 3..start + 19, "*");
        }
    }
    if !name.starts_with("_R") {
        return name;
    }
    let mut loose = String::with_capacity(name.len());
    let mut rest = name.as_str();
    while let Some(at) = rest.find("Cs") {
        loose.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
        let id = rest.bytes().take_while(u8::is_ascii_alphanumeric).count();
        if id > 0 && rest.as_bytes().get(id) == Some(&b'_') {
            loose.push('*');
            rest = &rest[id..];
        }
    }
    loose.push_str(rest);
    loose
}
