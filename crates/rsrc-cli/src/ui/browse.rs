//! Browsing a server from the page: a page of its resources, its templates (with each
//! template's variables), a template expanded with the page's values, and completions of
//! an argument. Invariant: an empty field is an undefined variable, in expansion and in
//! completion's context alike.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Query, State};
use rsrc::protocol::ResourceTemplate;
use serde::Deserialize;
use serde_json::{Value, json};

use super::app::{ApiError, ApiResult, App, call, json_of};

#[derive(Deserialize)]
pub(super) struct ListQuery {
    server: usize,
    uri: Option<String>,
    cursor: Option<String>,
}

pub(super) async fn list(State(app): State<App>, Query(q): Query<ListQuery>) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    let page = call(slot, client.list_resources(q.cursor, q.uri)).await?;
    Ok(Json(json_of(&page)))
}

/// A template's variables, from its text.
fn variables(template: &str) -> Result<Vec<String>, String> {
    let t = rsrc_uri_template::UriTemplate::parse(template).map_err(|e| e.to_string())?;
    let mut out: Vec<String> = Vec::new();
    for v in t.variables() {
        if !out.iter().any(|o| o == v) {
            out.push(v.to_owned());
        }
    }
    Ok(out)
}

pub(super) fn template_entry(t: &ResourceTemplate) -> Value {
    match variables(&t.uri_template) {
        Ok(vars) => json!({"template": t, "variables": vars}),
        Err(e) => json!({"template": t, "variables": [], "error": e}),
    }
}

#[derive(Deserialize)]
pub(super) struct TemplatesQuery {
    server: usize,
    cursor: Option<String>,
}

pub(super) async fn templates(
    State(app): State<App>,
    Query(q): Query<TemplatesQuery>,
) -> ApiResult {
    let (slot, client) = app.client(q.server)?;
    let page = call(slot, client.list_templates(q.cursor)).await?;
    let entries: Vec<Value> = page.resource_templates.iter().map(template_entry).collect();
    Ok(Json(
        json!({"templates": entries, "nextCursor": page.next_cursor}),
    ))
}

#[derive(Deserialize)]
pub(super) struct ExpandBody {
    template: String,
    values: BTreeMap<String, String>,
}

pub(super) async fn expand(Json(body): Json<ExpandBody>) -> ApiResult {
    let t = rsrc_uri_template::UriTemplate::parse(&body.template)
        .map_err(|e| ApiError::bad(format!("not a URI template: {e}")))?;
    // An empty field is an undefined variable.
    let values: BTreeMap<String, rsrc_uri_template::Value> = body
        .values
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, v.into()))
        .collect();
    let uri = t
        .try_expand(&values)
        .map_err(|e| ApiError::bad(format!("cannot expand the template: {e}")))?;
    Ok(Json(json!({"uri": uri})))
}

#[derive(Deserialize)]
pub(super) struct CompleteBody {
    server: usize,
    template: String,
    argument: String,
    value: String,
    #[serde(default)]
    context: BTreeMap<String, String>,
}

pub(super) async fn complete(State(app): State<App>, Json(body): Json<CompleteBody>) -> ApiResult {
    let (slot, client) = app.client(body.server)?;
    let context = body
        .context
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let done = call(
        slot,
        client.complete(&body.template, &body.argument, &body.value, context),
    )
    .await?;
    Ok(Json(json_of(&done)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_variables_are_listed_once_in_order() {
        assert_eq!(
            variables("db://{name}/{table}/{key}{?rev,name}").unwrap(),
            ["name", "table", "key", "rev"]
        );
        assert!(variables("x://{bad").is_err());
    }
}
