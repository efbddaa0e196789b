//! What makes a directory a skill (SEP-2640, delegating to the Agent Skills
//! specification): a `SKILL.md` opening with YAML frontmatter that names it and describes
//! it, a name that follows the naming rules and equals the directory's name, and the
//! extension's limits on files and bytes.
//!
//! Invariant: frontmatter is parsed from hostile text under a budget (no alias bombs, no
//! huge scalars) and rendered verbatim as a JSON object; anything that cannot be is a
//! refusal with a reason, never a panic and never a partial entry.

use serde_json::{Map, Value};

/// Most files one skill may hold, `SKILL.md` included (the extension's limit).
pub const MAX_FILES: usize = 512;
/// Most bytes one skill's files may hold together (the extension's limit: 16 MiB).
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Longest `SKILL.md` whose frontmatter is read.
pub(crate) const MAX_SKILL_MD: u64 = 1024 * 1024;
/// Longest description (Agent Skills specification).
const MAX_DESCRIPTION: usize = 1024;

/// Why a directory is not served as a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal(pub(crate) String);

/// The frontmatter of a `SKILL.md` whose skill directory is named `dir_name`: the YAML
/// mapping between the opening and closing `---` lines, as JSON, with a valid `name`
/// equal to `dir_name` and a non-empty `description`.
pub(crate) fn frontmatter(text: &str, dir_name: &str) -> Result<Map<String, Value>, Refusal> {
    let yaml = block(text).ok_or_else(|| {
        Refusal("SKILL.md does not open with a ----delimited YAML frontmatter block".into())
    })?;
    // YAML 1.2 scalars (as hosts' parsers read them): `y`, `no`, `on` are strings.
    let options = serde_saphyr::options! {
        strict_booleans: true,
        budget: serde_saphyr::budget! {
            max_total_scalar_bytes: 256 * 1024,
            max_depth: 32,
            max_aliases: 64,
        },
    };
    let value: Value = serde_saphyr::from_str_with_options(yaml, options)
        .map_err(|e| Refusal(format!("SKILL.md frontmatter is not valid YAML: {e}")))?;
    let Value::Object(map) = value else {
        return Err(Refusal("SKILL.md frontmatter is not a mapping".into()));
    };
    let name = match map.get("name") {
        Some(Value::String(n)) => n.as_str(),
        _ => {
            return Err(Refusal(
                "SKILL.md frontmatter has no string \"name\"".into(),
            ));
        }
    };
    check_name(name)?;
    if name != dir_name {
        return Err(Refusal(format!(
            "the name {name:?} differs from the directory's name {dir_name:?}"
        )));
    }
    match map.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() && d.chars().count() <= MAX_DESCRIPTION => {}
        Some(Value::String(d)) if !d.trim().is_empty() => {
            return Err(Refusal(format!(
                "the description is longer than {MAX_DESCRIPTION} characters"
            )));
        }
        _ => {
            return Err(Refusal(
                "SKILL.md frontmatter has no non-empty string \"description\"".into(),
            ));
        }
    }
    Ok(map)
}

/// The YAML between a leading `---` line and the next `---` line (a BOM and CRLF
/// allowed).
fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line
            .trim_end_matches(['\r', '\n'])
            .trim_end_matches([' ', '\t'])
            == "---"
        {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    // A closing line at the very end without a newline.
    (rest.trim_end_matches(['\r', '\n']) == "---").then_some("")
}

/// The Agent Skills naming rules: 1 to 64 characters, lowercase letters, digits and
/// hyphens, no hyphen first, last or twice in a row.
pub(crate) fn check_name(name: &str) -> Result<(), Refusal> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(Refusal(format!(
            "the name {name:?} breaks the naming rules (1-64 lowercase letters, digits and single inner hyphens)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frontmatter_is_rendered_verbatim_as_json() {
        let text = "---\nname: pdf-tools\ndescription: Fill forms\nlicense: MIT\nmetadata:\n  version: \"2.1\"\n  tags: [a, b]\n---\n# Body\n";
        let fm = frontmatter(text, "pdf-tools").unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf-tools", "description": "Fill forms", "license": "MIT",
                "metadata": {"version": "2.1", "tags": ["a", "b"]}})
        );
        let crlf = "\u{feff}---\r\nname: x\r\ndescription: d\r\n---\r\nbody";
        assert_eq!(frontmatter(crlf, "x").unwrap()["description"], "d");
    }

    #[test]
    fn a_skill_without_its_frontmatter_name_or_description_is_refused() {
        for (text, why) in [
            ("# no frontmatter", "does not open"),
            ("---\nname: x\ndescription: d\n", "does not open"),
            ("---\n- a\n- b\n---\n", "not a mapping"),
            ("---\nname: [x\n---\n", "not valid YAML"),
            ("---\ndescription: d\n---\n", "no string \"name\""),
            ("---\nname: x\n---\n", "description"),
            ("---\nname: x\ndescription: \"  \"\n---\n", "description"),
            (
                "---\nname: y\ndescription: d\n---\n",
                "differs from the directory",
            ),
        ] {
            let e = frontmatter(text, "x").unwrap_err();
            assert!(e.0.contains(why), "{text:?}: {e:?}");
        }
        let long = format!("---\nname: x\ndescription: {}\n---\n", "d".repeat(1025));
        assert!(frontmatter(&long, "x").unwrap_err().0.contains("longer"));
    }

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["a", "pdf-tools", "x2", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "PDF",
            "a_b",
            "a.b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn alias_bombs_are_refused_within_the_budget() {
        let mut bomb = String::from("---\nname: x\ndescription: d\na0: &a0 [lol, lol]\n");
        for i in 1..30 {
            bomb.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}]\n", p = i - 1));
        }
        bomb.push_str("---\n");
        assert!(frontmatter(&bomb, "x").is_err());
    }
}
