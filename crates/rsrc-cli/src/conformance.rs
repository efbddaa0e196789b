//! The fixture of the official MCP conformance suite (`rsrc serve --conformance-fixtures`):
//! the `test://` resources, template and subscribable resource its resource scenarios
//! read, plus the little its other scenarios touch on the way — one prompt whose
//! argument completes, and empty tool and prompt lists carrying caching hints.
//!
//! Invariant: everything here is fixed data; nothing reaches the machine.

use std::collections::BTreeMap;

use rsrc::protocol::{Completion, Resource, ResourceTemplate};
use rsrc::{
    PromptCompletion, Representation, RequestContext, ResourceSet, ServerBuilder, TemplateResource,
};
use serde_json::{Map, Value, json};

/// The URI prefix of the fixture.
pub(crate) const PREFIX: &str = "test://";

/// A 1×1 transparent PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// The prompt whose arguments the completion scenario completes.
const PROMPT: &str = "test_prompt_with_arguments";

fn resources() -> ResourceSet {
    let template = TemplateResource::new(
        ResourceTemplate::new("test://template/{id}/data", "Template resource")
            .with_description("A resource made from the id in its URI")
            .with_mime_type("application/json"),
        |_ctx: RequestContext, vars| async move {
            let id = vars.str("id").unwrap_or_default().to_owned();
            let body =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(vec![
                Representation::text(body.to_string()).with_mime_type("application/json"),
            ])
        },
    )
    .and_then(|t| {
        t.with_completion("id", |input| async move {
            Ok(["123", "456", "789"]
                .into_iter()
                .filter(|v| v.starts_with(&input.value))
                .map(str::to_owned)
                .collect())
        })
    })
    .expect("the fixture template is valid");
    ResourceSet::new()
        .with_text(
            Resource::new("test://static-text", "Static text resource")
                .with_description("A static text resource for testing")
                .with_mime_type("text/plain"),
            "This is the content of the static text resource.",
        )
        .with_blob(
            Resource::new("test://static-binary", "Static binary resource")
                .with_description("A static binary resource (a PNG image) for testing")
                .with_mime_type("image/png"),
            PNG,
        )
        .with_text(
            Resource::new("test://watched-resource", "Watched resource")
                .with_description("A resource clients may subscribe to")
                .with_mime_type("text/plain"),
            "Watched resource content",
        )
        .with_template(template)
        .with_subscriptions()
}

/// A list result, with the caching hints 2026-07-28 asks for.
fn list(ctx: &RequestContext, key: &str, items: Value) -> Value {
    let mut result = Map::new();
    result.insert(key.to_owned(), items);
    if ctx.protocol_version().is_modern() {
        result.insert("ttlMs".into(), json!(0));
        result.insert("cacheScope".into(), json!("private"));
    }
    Value::Object(result)
}

/// Mounts the fixture on `builder`.
pub(crate) fn mount(builder: ServerBuilder) -> ServerBuilder {
    builder
        .mount(PREFIX, resources())
        .capability("tools", json!({}))
        .capability("prompts", json!({}))
        .method(
            "tools/list",
            |ctx, _params: Map<String, Value>| async move { Ok(list(&ctx, "tools", json!([]))) },
        )
        .method(
            "prompts/list",
            |ctx, _params: Map<String, Value>| async move {
                Ok(list(
                    &ctx,
                    "prompts",
                    json!([{
                        "name": PROMPT,
                        "description": "A prompt with arguments",
                        "arguments": [
                            {"name": "arg1", "description": "First argument", "required": true},
                            {"name": "arg2", "description": "Second argument", "required": true}
                        ]
                    }]),
                ))
            },
        )
        .prompt_completion(|_ctx, req: PromptCompletion| async move {
            if req.prompt != PROMPT {
                return Err(rsrc::ResourceError::invalid(
                    "",
                    format!("unknown prompt {:?}", req.prompt),
                ));
            }
            let values: BTreeMap<&str, &[&str]> = [
                ("arg1", &["paris", "park", "party", "test", "testing"][..]),
                ("arg2", &["alpha", "beta", "gamma"][..]),
            ]
            .into_iter()
            .collect();
            let Some(candidates) = values.get(req.argument.as_str()) else {
                return Err(rsrc::ResourceError::invalid(
                    "",
                    format!("{PROMPT} has no argument {:?}", req.argument),
                ));
            };
            Ok(Completion::from_matches(
                candidates
                    .iter()
                    .filter(|v| v.starts_with(&req.value))
                    .map(|v| (*v).to_owned())
                    .collect(),
            ))
        })
}
