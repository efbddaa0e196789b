//! Validation of server messages against the official MCP JSON schemas.
//!
//! Each message is checked twice: its envelope against the JSON-RPC definitions of the
//! revision, and its payload against the definition for its method (a result against
//! e.g. `ListResourcesResult`, a notification against e.g. `ProgressNotification`, a
//! 2026-07-28 error against its code's definition). SEP-2093's `resources/metadata` is not
//! in the schemas: its result is checked as a `Result` whose `resource` is a `Resource`.
//!
//! Results of extension methods the official schemas do not define (the skills
//! extension's `skills/list` and `skills/get`) are checked as the revision's `Result` (in
//! 2026-07-28, `CacheableResult`, as the SEP requires) and against the extension's own
//! schema, written from its specification (`testdata/schema/extensions/`).
//!
//! One documented exception: an error answering a message whose id could not be read
//! carries `"id": null`, as JSON-RPC 2.0 requires. No MCP schema can express a null id
//! (2025-11-25 and later omit the member instead), so such a message is checked with the
//! id removed against `JSONRPCErrorResponse` of 2025-11-25 or later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use rsrc_protocol::ProtocolVersion;
use serde_json::{Value, json};

fn schema_path(v: ProtocolVersion) -> String {
    format!(
        "{}/../../testdata/schema/{}.schema.json",
        env!("CARGO_MANIFEST_DIR"),
        v.as_str()
    )
}

fn root(v: ProtocolVersion) -> &'static Value {
    static ROOTS: OnceLock<Mutex<HashMap<ProtocolVersion, &'static Value>>> = OnceLock::new();
    let mut roots = ROOTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    roots.entry(v).or_insert_with(|| {
        let text = std::fs::read_to_string(schema_path(v)).expect("schema file is readable");
        Box::leak(Box::new(
            serde_json::from_str(&text).expect("schema is JSON"),
        ))
    })
}

fn defs_key(v: ProtocolVersion) -> &'static str {
    if v == ProtocolVersion::V2025_06_18 {
        "definitions"
    } else {
        "$defs"
    }
}

type Cache = HashMap<(ProtocolVersion, String), Arc<Validator>>;

fn validator(v: ProtocolVersion, def: &str) -> Arc<Validator> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Arc::clone(cache.entry((v, def.to_owned())).or_insert_with(|| {
        let root = root(v);
        let key = defs_key(v);
        assert!(
            root[key].get(def).is_some(),
            "{def} is not defined in the {v} schema"
        );
        let mut schema = json!({ "$ref": format!("#/{key}/{def}") });
        schema[key] = root[key].clone();
        let built = if v == ProtocolVersion::V2025_06_18 {
            jsonschema::draft7::options()
                .should_validate_formats(true)
                .build(&schema)
        } else {
            jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&schema)
        };
        Arc::new(built.unwrap_or_else(|e| panic!("cannot compile {def} of {v}: {e}")))
    }))
}

fn check(v: ProtocolVersion, def: &str, instance: &Value) -> Result<(), String> {
    let validator = validator(v, def);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{v} {def} rejects {instance}:\n  {}",
            errors.join("\n  ")
        ))
    }
}

fn result_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => {
            "EmptyResult"
        }
        "server/discover" => "DiscoverResult",
        "resources/list" | "resources/directory/read" => "ListResourcesResult",
        "resources/read" => "ReadResourceResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        "resources/metadata" => "Result",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        _ => return None,
    })
}

/// The extension schema file and definition of an extension method's result.
fn extension_result_def(method: &str) -> Option<(&'static str, &'static str)> {
    Some(match method {
        "skills/list" => ("skills", "ListSkillsResult"),
        "skills/get" => ("skills", "GetSkillResult"),
        _ => return None,
    })
}

fn check_extension(file: &str, def: &str, instance: &Value) -> Result<(), String> {
    let path = format!(
        "{}/../../testdata/schema/extensions/{file}.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("extension schema file is readable");
    let root: Value = serde_json::from_str(&text).expect("extension schema is JSON");
    let schema = json!({"$ref": format!("#/$defs/{def}"), "$defs": root["$defs"]});
    let validator = jsonschema::draft202012::options()
        .build(&schema)
        .unwrap_or_else(|e| panic!("cannot compile {def} of {file}: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{file} {def} rejects {instance}:\n  {}",
            errors.join("\n  ")
        ))
    }
}

fn notification_def(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/cancelled" => "CancelledNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        _ => return None,
    })
}

fn modern_error_def(code: i64) -> Option<(&'static str, bool)> {
    // (definition, whether it describes the whole response rather than the error object)
    Some(match code {
        -32700 => ("ParseError", false),
        -32600 => ("InvalidRequestError", false),
        -32601 => ("MethodNotFoundError", false),
        -32602 => ("InvalidParamsError", false),
        -32603 => ("InternalError", false),
        -32020 => ("HeaderMismatchError", true),
        -32021 => ("MissingRequiredClientCapabilityError", true),
        -32022 => ("UnsupportedProtocolVersionError", true),
        _ => return None,
    })
}

/// Validates one message a server sent, in revision `v`. `request_method` is the method
/// of the request a response answers (needed to pick the result's definition).
pub fn validate(
    v: ProtocolVersion,
    msg: &Value,
    request_method: Option<&str>,
) -> Result<(), String> {
    let legacy_06 = v == ProtocolVersion::V2025_06_18;
    if let Some(method) = msg.get("method").and_then(Value::as_str) {
        if msg.get("id").is_some() {
            return Err(format!(
                "the server sent a request ({method}); it must not: {msg}"
            ));
        }
        check(v, "JSONRPCNotification", msg)?;
        let def = notification_def(method)
            .ok_or_else(|| format!("no schema definition known for notification {method}"))?;
        return check(v, def, msg);
    }
    if let Some(error) = msg.get("error") {
        if msg.get("id") == Some(&Value::Null) {
            // JSON-RPC's null id (see the module docs).
            let mut without_id = msg.clone();
            without_id
                .as_object_mut()
                .ok_or("not an object")?
                .remove("id");
            let v = v.max(ProtocolVersion::V2025_11_25);
            return check(v, "JSONRPCErrorResponse", &without_id);
        }
        check(
            v,
            if legacy_06 {
                "JSONRPCError"
            } else {
                "JSONRPCErrorResponse"
            },
            msg,
        )?;
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or_default();
        if v.is_modern() {
            if code == -32002 {
                return Err(format!(
                    "{v} forbids the legacy not-found code -32002: {msg}"
                ));
            }
            if let Some((def, whole)) = modern_error_def(code) {
                check(v, def, if whole { msg } else { error })?;
            }
        }
        return Ok(());
    }
    check(
        v,
        if legacy_06 {
            "JSONRPCResponse"
        } else {
            "JSONRPCResultResponse"
        },
        msg,
    )?;
    let method =
        request_method.ok_or_else(|| format!("a response to an unknown request: {msg}"))?;
    let result = &msg["result"];
    if let Some((file, def)) = extension_result_def(method) {
        check(
            v,
            if v.is_modern() {
                "CacheableResult"
            } else {
                "Result"
            },
            result,
        )?;
        return check_extension(file, def, result);
    }
    let def = result_def(method)
        .ok_or_else(|| format!("no schema definition known for the result of {method}"))?;
    check(v, def, result)?;
    if method == "resources/metadata" {
        check(v, "Resource", &result["resource"])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_results_are_checked_against_the_extension_schema() {
        let entry = |digest: &str| {
            json!({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"},
                "resources": [{"uri": "skill://a/SKILL.md", "digest": digest, "size": 1}]})
        };
        let good = format!("sha256:{}", "0".repeat(64));
        let list = |e: Value| json!({"jsonrpc":"2.0","id":1,"result":{"skills":[e]}});
        let v = ProtocolVersion::V2025_11_25;
        validate(v, &list(entry(&good)), Some("skills/list")).unwrap();
        assert!(validate(v, &list(entry("md5:00")), Some("skills/list")).is_err());
        // 2026-07-28 results carry the caching attributes.
        let modern = ProtocolVersion::V2026_07_28;
        let mut m = list(entry(&good));
        m["result"]["resultType"] = json!("complete");
        assert!(validate(modern, &m, Some("skills/list")).is_err());
        m["result"]["ttlMs"] = json!(0);
        m["result"]["cacheScope"] = json!("private");
        validate(modern, &m, Some("skills/list")).unwrap();
        let with_cursor =
            json!({"jsonrpc":"2.0","id":1,"result":{"skill":entry(&good),"nextCursor":"x"}});
        assert!(validate(v, &with_cursor, Some("skills/get")).is_err());
    }

    #[test]
    fn the_validator_rejects_what_the_schema_rejects() {
        let v = ProtocolVersion::V2026_07_28;
        let ok = json!({"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","resources":[],"ttlMs":0,"cacheScope":"private"}});
        validate(v, &ok, Some("resources/list")).unwrap();
        let missing_ttl = json!({"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","resources":[],"cacheScope":"private"}});
        assert!(validate(v, &missing_ttl, Some("resources/list")).is_err());
        let bad_uri = json!({"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","resources":[{"uri":"not a uri","name":"x"}],"ttlMs":0,"cacheScope":"private"}});
        assert!(validate(v, &bad_uri, Some("resources/list")).is_err());
        let legacy_code = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"x"}});
        assert!(validate(v, &legacy_code, Some("resources/read")).is_err());
        validate(
            ProtocolVersion::V2025_06_18,
            &legacy_code,
            Some("resources/read"),
        )
        .unwrap();
    }

    #[test]
    fn sep_2093_additions_are_permitted_by_every_schema() {
        for v in ProtocolVersion::ALL {
            let mut result = json!({"contents":[{"uri":"file:///a","name":"a","title":"A","size":1,
                "resourceType":"document","capabilities":{"list":false,"subscribe":true},
                "annotations":{"lastModified":"2025-01-12T15:00:58Z"},"text":"x"}]});
            if v.is_modern() {
                result["resultType"] = json!("complete");
                result["ttlMs"] = json!(0);
                result["cacheScope"] = json!("private");
            }
            let msg = json!({"jsonrpc":"2.0","id":1,"result":result});
            validate(v, &msg, Some("resources/read")).unwrap();
        }
    }
}
