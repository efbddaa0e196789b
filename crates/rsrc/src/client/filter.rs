//! SEP-2564 from the client's side: a listing narrowed by a [`ListFilter`], by the server
//! when it declares that it applies the filter's fields (`resources.filtering`), here
//! otherwise.
//!
//! Invariants:
//! - A `filter` is sent only to a server whose `resources.filtering.supported` names every
//!   field the filter uses; any other server gets plain listings, filtered here.
//! - Every item these helpers return matches the filter under this module's rule
//!   ([`FilterRule`]), checked here even when the server filtered: a server that filters
//!   loosely (or not at all) cannot widen the answer.
//! - Listings follow cursors under the page cap like every other listing of the client.
//!
//! The rule: a glob's `*` matches any run of characters (`/` included), `?` one
//! character, `[…]` a class and `{a,b}` alternatives, case-sensitively; the patterns of one
//! field are ORed, the fields present are ANDed, and an absent or empty field does not
//! filter.

use rsrc_protocol::resources::{
    ListFilter, ListResourceTemplatesParams, ListResourceTemplatesResult, ListResourcesParams,
    ListResourcesResult,
};
use rsrc_protocol::{Resource, ResourceTemplate, methods};

use super::{Client, ClientError};

/// A listing narrowed by a filter.
#[derive(Debug, Clone, Default)]
pub struct Filtered<T> {
    /// The matching items, in server order.
    pub items: Vec<T>,
    /// `true` if the page cap stopped a listing before its end.
    pub truncated: bool,
    /// `true` if the server applied the filter (else every item was listed and matched
    /// here).
    pub by_server: bool,
}

/// A [`ListFilter`] compiled to match items here, with the rule of this module.
#[derive(Debug, Clone)]
pub struct FilterRule {
    names: Option<globset::GlobSet>,
    uris: Option<globset::GlobSet>,
}

fn glob_set(patterns: Option<&Vec<String>>) -> Result<Option<globset::GlobSet>, ClientError> {
    let Some(patterns) = patterns.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let mut set = globset::GlobSetBuilder::new();
    for p in patterns {
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| ClientError::Protocol(format!("bad glob {p:?}: {e}")))?;
        set.add(glob);
    }
    set.build()
        .map(Some)
        .map_err(|e| ClientError::Protocol(format!("bad globs: {e}")))
}

impl FilterRule {
    /// Compiles `filter`; a pattern that is not a glob is an error.
    pub fn new(filter: &ListFilter) -> Result<FilterRule, ClientError> {
        Ok(FilterRule {
            names: glob_set(filter.name_patterns.as_ref())?,
            uris: glob_set(filter.uri_patterns.as_ref())?,
        })
    }

    /// Whether an item with this name and URI (a template's `uriTemplate`) matches.
    pub fn matches(&self, name: &str, uri: &str) -> bool {
        self.names.as_ref().is_none_or(|s| s.is_match(name))
            && self.uris.as_ref().is_none_or(|s| s.is_match(uri))
    }
}

/// A search text as a glob: as it is when it holds a glob character (`*?[{`), else a
/// glob matching it anywhere (`*text*`).
pub fn anywhere(text: &str) -> String {
    if text.contains(['*', '?', '[', '{']) {
        text.to_owned()
    } else {
        format!("*{text}*")
    }
}

/// The spellings of `glob` to send so that a case-sensitive server finds what a person
/// typing it means: as typed, in lower case, in upper case, and capitalised (each once).
pub fn spellings(glob: &str) -> Vec<String> {
    let lower = glob.to_lowercase();
    let mut capitalised = String::with_capacity(lower.len());
    let mut at_start = true;
    for c in lower.chars() {
        if at_start && c.is_alphabetic() {
            capitalised.extend(c.to_uppercase());
            at_start = false;
        } else {
            capitalised.push(c);
        }
    }
    let mut out: Vec<String> = Vec::with_capacity(4);
    for s in [glob.to_owned(), lower, glob.to_uppercase(), capitalised] {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The fields a filter uses, by their wire names.
fn fields(filter: &ListFilter) -> impl Iterator<Item = &'static str> {
    let used = |f: &Option<Vec<String>>| f.as_ref().is_some_and(|p| !p.is_empty());
    [
        used(&filter.name_patterns).then_some("namePatterns"),
        used(&filter.uri_patterns).then_some("uriPatterns"),
    ]
    .into_iter()
    .flatten()
}

impl Client {
    /// Whether the server declares that it applies every field `filter` uses (SEP-2564).
    pub fn filters(&self, filter: &ListFilter) -> bool {
        let Some(filtering) = self
            .server
            .capabilities
            .resources
            .as_ref()
            .and_then(|r| r.filtering.as_ref())
        else {
            return false;
        };
        fields(filter).all(|f| filtering.supports(f))
    }

    /// One page of `resources/list` with `filter` sent as given (see [`Client::filters`]).
    pub async fn list_resources_filtered(
        &self,
        cursor: Option<String>,
        uri: Option<String>,
        filter: Option<ListFilter>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.request::<methods::ListResources>(&ListResourcesParams {
            cursor,
            uri,
            filter,
            meta: None,
        })
        .await
    }

    /// One page of `resources/templates/list` with `filter` sent as given.
    pub async fn list_templates_filtered(
        &self,
        cursor: Option<String>,
        filter: Option<ListFilter>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.request::<methods::ListResourceTemplates>(&ListResourceTemplatesParams {
            cursor,
            filter,
            meta: None,
        })
        .await
    }

    /// Every resource (or every child of `uri`) that matches `filter`: the server filters
    /// when it declares the filter's fields, else every item is listed and matched here.
    /// At most `max_pages` pages are followed; a listing cut short says so (`truncated`).
    pub async fn list_matching(
        &self,
        uri: Option<&str>,
        filter: &ListFilter,
        max_pages: usize,
    ) -> Result<Filtered<Resource>, ClientError> {
        let rule = FilterRule::new(filter)?;
        let by_server = self.filters(filter);
        let sent = by_server.then(|| filter.clone());
        let (rule, sent) = (&rule, &sent);
        let all = super::paging::collect(max_pages, |cursor| async move {
            let page = self
                .list_resources_filtered(cursor, uri.map(str::to_owned), sent.clone())
                .await?;
            let kept = page.resources.into_iter();
            Ok((
                kept.filter(|r| rule.matches(&r.name, &r.uri)).collect(),
                page.next_cursor,
            ))
        })
        .await?;
        Ok(Filtered {
            items: all.items,
            truncated: all.truncated,
            by_server,
        })
    }

    /// Every template that matches `filter` (its `uriTemplate` stands for the URI), by the
    /// server when it declares the filter's fields, else here.
    pub async fn templates_matching(
        &self,
        filter: &ListFilter,
        max_pages: usize,
    ) -> Result<Filtered<ResourceTemplate>, ClientError> {
        let rule = FilterRule::new(filter)?;
        let by_server = self.filters(filter);
        let sent = by_server.then(|| filter.clone());
        let (rule, sent) = (&rule, &sent);
        let all = super::paging::collect(max_pages, |cursor| async move {
            let page = self.list_templates_filtered(cursor, sent.clone()).await?;
            let kept = page.resource_templates.into_iter();
            Ok((
                kept.filter(|t| rule.matches(&t.name, &t.uri_template))
                    .collect(),
                page.next_cursor,
            ))
        })
        .await?;
        Ok(Filtered {
            items: all.items,
            truncated: all.truncated,
            by_server,
        })
    }

    /// Resources (of `uri`, or all) whose name **or** URI matches one of `globs`. A filter's
    /// fields are ANDed, so on a server that filters this is two filtered listings (names,
    /// then URIs) merged, each resource once; elsewhere one listing matched here.
    pub async fn search_resources(
        &self,
        uri: Option<&str>,
        globs: &[String],
        max_pages: usize,
    ) -> Result<Filtered<Resource>, ClientError> {
        let by_name = ListFilter {
            name_patterns: Some(globs.to_vec()),
            uri_patterns: None,
        };
        let by_uri = ListFilter {
            name_patterns: None,
            uri_patterns: Some(globs.to_vec()),
        };
        if !(self.filters(&by_name) && self.filters(&by_uri)) {
            let names = FilterRule::new(&by_name)?;
            let uris = FilterRule::new(&by_uri)?;
            let everything = self
                .list_matching(uri, &ListFilter::default(), max_pages)
                .await?;
            return Ok(Filtered {
                items: everything
                    .items
                    .into_iter()
                    .filter(|r| names.matches(&r.name, &r.uri) || uris.matches(&r.name, &r.uri))
                    .collect(),
                truncated: everything.truncated,
                by_server: false,
            });
        }
        let mut out = self.list_matching(uri, &by_name, max_pages).await?;
        let more = self.list_matching(uri, &by_uri, max_pages).await?;
        let seen: std::collections::HashSet<String> =
            out.items.iter().map(|r| r.uri.clone()).collect();
        out.items
            .extend(more.items.into_iter().filter(|r| !seen.contains(&r.uri)));
        out.truncated |= more.truncated;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(names: &[&str], uris: &[&str]) -> ListFilter {
        let list = |p: &[&str]| (!p.is_empty()).then(|| p.iter().map(|s| s.to_string()).collect());
        ListFilter {
            name_patterns: list(names),
            uri_patterns: list(uris),
        }
    }

    #[test]
    fn fields_are_anded_and_patterns_within_a_field_ored() {
        let rule = FilterRule::new(&filter(&["*.md", "*.txt"], &["file:///docs/**"])).unwrap();
        assert!(rule.matches("a.md", "file:///docs/a.md"));
        assert!(rule.matches("b.txt", "file:///docs/sub/b.txt"));
        assert!(!rule.matches("a.md", "file:///src/a.md"));
        assert!(!rule.matches("a.rs", "file:///docs/a.rs"));
    }

    #[test]
    fn an_absent_or_empty_field_does_not_filter() {
        let rule = FilterRule::new(&ListFilter {
            name_patterns: Some(vec![]),
            uri_patterns: None,
        })
        .unwrap();
        assert!(rule.matches("anything", "x:y"));
    }

    #[test]
    fn a_star_crosses_slashes_and_matching_is_case_sensitive() {
        let rule = FilterRule::new(&filter(&[], &["file:///*.md"])).unwrap();
        assert!(rule.matches("n", "file:///a/b/c.md"));
        assert!(!rule.matches("n", "file:///a/b/c.MD"));
    }

    #[test]
    fn a_bad_glob_is_an_error() {
        assert!(FilterRule::new(&filter(&["[a"], &[])).is_err());
    }

    #[test]
    fn spellings_cover_the_usual_cases_once_each() {
        assert_eq!(
            spellings("*readMe*"),
            ["*readMe*", "*readme*", "*README*", "*Readme*"]
        );
        assert_eq!(spellings("*.md"), ["*.md", "*.MD", "*.Md"]);
        assert_eq!(spellings("*42*"), ["*42*"]);
    }
}
