//! The skills extension's own methods (SEP-2640): `skills/list`, a keyset-paged list of
//! every skill's entry, and `skills/get`, one skill's entry by the URI of its
//! `SKILL.md`. Invariant: each answer reads one snapshot of the index, and carries the
//! provider's caching hint for 2026-07-28 clients.

use base64::Engine as _;
use rsrc::{RequestContext, ResourceError, keyset};
use serde_json::{Map, Value, json};

use super::state::ServedSkills;

/// The extension's identifier, under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

fn cached(served: &ServedSkills, ctx: &RequestContext, mut result: Value) -> Value {
    if ctx.protocol_version().is_modern() {
        let hint = served.config.cache;
        result["ttlMs"] = json!(hint.ttl_ms);
        result["cacheScope"] = json!(hint.scope);
    }
    result
}

pub(super) fn skills_list(
    served: &ServedSkills,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ResourceError> {
    let after = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| ResourceError::bad_position(""))?,
        ),
        Some(_) => return Err(ResourceError::bad_position("")),
    };
    let index = served.index();
    let rest = index
        .skills
        .range::<str, _>(keyset::range(after.as_deref()));
    let page = keyset::page(rest.map(|(_, e)| e), served.config.page_size, |e| {
        e.uri.clone()
    });
    let skills: Vec<Value> = page.items.iter().map(|e| e.to_json()).collect();
    let mut result = json!({ "skills": skills });
    if let Some(last) = page.next {
        result["nextCursor"] = json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(last));
    }
    Ok(cached(served, ctx, result))
}

pub(super) fn skills_get(
    served: &ServedSkills,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ResourceError> {
    let Some(Value::String(uri)) = params.get("uri") else {
        return Err(ResourceError::invalid(
            "",
            "skills/get needs the \"uri\" of a SKILL.md",
        ));
    };
    let index = served.index();
    let entry = index.skills.get(uri).ok_or_else(|| {
        ResourceError::invalid(uri, format!("{uri} is not a skill this server serves"))
    })?;
    Ok(cached(served, ctx, json!({"skill": entry.to_json()})))
}
