//! Searching every server from the page at once: a server that filters is asked for the
//! names and URIs that match; any other lists everything, matched here on names, titles,
//! URIs and descriptions, case-insensitively.
//!
//! Invariant: a search is bounded: at most [`QUERY_MAX`] characters, [`SEARCH_PAGES`]
//! pages listed and [`SEARCH_MAX`] items returned per server; a server's failure is its
//! own answer's, never the whole search's.

use axum::Json;
use axum::extract::{Query, State};
use rsrc::protocol::resources::ListFilter;
use rsrc::protocol::{Resource, ResourceTemplate};
use rsrc_client::anywhere;
use serde::Deserialize;
use serde_json::{Value, json};

use super::app::{ApiError, ApiResult, App, call};
use super::browse::template_entry;
use super::servers::Slot;

/// Pages a search lists per server.
const SEARCH_PAGES: usize = 20;
/// Items a search returns per server.
const SEARCH_MAX: usize = 500;
/// Longest search text.
const QUERY_MAX: usize = 200;

#[derive(Deserialize)]
pub(super) struct SearchQuery {
    q: String,
}

/// Case-insensitive matching of a search over names, titles, URIs and descriptions.
struct Matcher(globset::GlobMatcher);

impl Matcher {
    fn new(glob: &str) -> Result<Matcher, ApiError> {
        globset::GlobBuilder::new(glob)
            .case_insensitive(true)
            .literal_separator(false)
            .build()
            .map(|g| Matcher(g.compile_matcher()))
            .map_err(|e| ApiError::bad(format!("not a pattern: {e}")))
    }

    fn any<'a>(&self, fields: impl IntoIterator<Item = Option<&'a str>>) -> bool {
        fields.into_iter().flatten().any(|f| self.0.is_match(f))
    }

    fn resource(&self, r: &Resource) -> bool {
        self.any([
            Some(r.name.as_str()),
            r.title.as_deref(),
            Some(r.uri.as_str()),
            r.description.as_deref(),
        ])
    }

    fn template(&self, t: &ResourceTemplate) -> bool {
        self.any([
            Some(t.name.as_str()),
            t.title.as_deref(),
            Some(t.uri_template.as_str()),
            t.description.as_deref(),
        ])
    }
}

/// One server's answer to a search.
async fn search_one(slot: &Slot, glob: &str, matcher: &Matcher) -> Value {
    let client = match slot.client() {
        Ok(c) => c,
        Err(e) => return json!({"server": slot.id, "error": ApiError::from(e).body}),
    };
    let names = rsrc_client::spellings(glob);
    let uris: Vec<String> = names
        .iter()
        .flat_map(|g| rsrc_client::in_any_segment(g))
        .collect();
    let by_server = rsrc_client::expressible(glob)
        && client.filters(&ListFilter {
            name_patterns: Some(names.clone()),
            uri_patterns: Some(uris.clone()),
        });
    // A server that filters is asked for the names and URIs that match (as typed and in
    // the usual cases); any other lists everything, matched here on every field.
    let listed = if by_server {
        call(
            slot,
            client.search_resources(None, &names, &uris, SEARCH_PAGES),
        )
        .await
    } else {
        call(
            slot,
            client.list_matching(None, &ListFilter::default(), SEARCH_PAGES),
        )
        .await
    };
    let listed = match listed {
        Ok(l) => l,
        Err(e) => return json!({"server": slot.id, "error": e.body}),
    };
    let mut truncated = listed.truncated;
    let mut resources: Vec<&Resource> = listed
        .items
        .iter()
        .filter(|r| matcher.resource(r))
        .collect();
    if resources.len() > SEARCH_MAX {
        resources.truncate(SEARCH_MAX);
        truncated = true;
    }
    let templates = match client.list_all_templates(SEARCH_PAGES).await {
        Ok(t) => t
            .items
            .into_iter()
            .filter(|t| matcher.template(t))
            .collect(),
        Err(_) => Vec::new(),
    };
    let templates: Vec<Value> = templates
        .iter()
        .take(SEARCH_MAX)
        .map(template_entry)
        .collect();
    json!({
        "server": slot.id,
        "byServer": by_server,
        "truncated": truncated,
        "resources": resources,
        "templates": templates,
    })
}

pub(super) async fn search(State(app): State<App>, Query(q): Query<SearchQuery>) -> ApiResult {
    let text = q.q.trim();
    if text.is_empty() || text.chars().count() > QUERY_MAX {
        return Err(ApiError::bad(format!(
            "a search is 1 to {QUERY_MAX} characters"
        )));
    }
    let glob = anywhere(text);
    let matcher = Matcher::new(&glob)?;
    let answers = futures_util::future::join_all(
        app.servers
            .all()
            .iter()
            .map(|slot| search_one(slot, &glob, &matcher)),
    )
    .await;
    Ok(Json(json!({"servers": answers})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_match_names_titles_uris_and_descriptions_case_insensitively() {
        let m = Matcher::new(&anywhere("GUIDE")).unwrap();
        let r = Resource::new("x:///a", "a").with_description("The user guide");
        assert!(m.resource(&r), "by description");
        assert!(
            m.resource(&Resource::new("x:///n", "style-guide")),
            "by name"
        );
        assert!(!m.resource(&Resource::new("x:///b", "b")));
        let m = Matcher::new(&anywhere("*.md")).unwrap();
        assert!(m.resource(&Resource::new("x:///dir/A.MD", "A")), "by URI");
        // A title alone is enough, for a resource and for a template.
        let m = Matcher::new(&anywhere("handbook")).unwrap();
        let titled = Resource::new("x:///c", "c").with_title("Staff HANDBOOK");
        assert!(m.resource(&titled), "by title");
        assert!(!m.resource(&Resource::new("x:///c", "c").with_title("Staff guide")));
        let template = ResourceTemplate::new("x:///{id}", "pages").with_title("The Handbook");
        assert!(m.template(&template), "a template by title");
        assert!(!m.template(&ResourceTemplate::new("x:///{id}", "pages")));
        let m = Matcher::new(&anywhere("pages")).unwrap();
        assert!(
            m.template(&ResourceTemplate::new("x:///{id}", "pages")),
            "a template by name"
        );
    }
}
