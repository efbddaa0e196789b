//! SEP-2564 from the client's side: a listing narrowed by a [`ListFilter`], by the server
//! when it declares that it applies the filter's fields (`resources.filtering`), here
//! otherwise.
//!
//! Invariants:
//! - A `filter` is sent only to a server whose `resources.filtering.supported` names every
//!   field the filter uses; any other server gets plain listings, filtered here.
//! - Every item these helpers return matches the filter under the server's own rule
//!   ([`rsrc::filter`], one rule for both sides), checked here even when the server
//!   filtered: a server that filters loosely (or not at all) cannot widen the answer.
//! - Listings follow cursors under the page cap like every other listing of the client.
//!
//! The rule is `rsrc::filter`'s: in a name `*` matches any run of characters; in a URI
//! it stays within one segment and `**` spans segments; the patterns of one field are
//! ORed, the fields present are ANDed, and an absent or empty field does not filter.

use rsrc_protocol::resources::{
    Feature, ListFilter, ListResourceTemplatesParams, ListResourceTemplatesResult,
    ListResourcesParams, ListResourcesResult,
};
use rsrc_protocol::{Resource, ResourceTemplate, methods};

use crate::client::Client;
use crate::error::ClientError;
use rsrc::filter::Filter;

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

/// `filter` compiled with the server's rule; `None` when it filters nothing.
fn compile(filter: &ListFilter) -> Result<Option<Filter>, ClientError> {
    Filter::new(filter).map_err(|e| ClientError::Protocol(format!("invalid filter: {e}")))
}

/// Whether an item named `name` at `uri` passes `filter` (everything passes no filter).
fn passes(filter: Option<&Filter>, name: &str, uri: &str) -> bool {
    filter.is_none_or(|f| f.matches(name, uri))
}

/// A search text as a name glob: as it is when it holds a glob character (`*?[{\\`),
/// else a glob matching it anywhere in a name (`*text*`). (`{` stands for itself in a
/// server's pattern: see [`expressible`].)
pub fn anywhere(text: &str) -> String {
    if text.contains(['*', '?', '[', '{', '\\']) {
        text.to_owned()
    } else {
        format!("*{text}*")
    }
}

/// Whether a local glob means the same to a server that filters: braces are
/// alternatives here (`{a,b}`) and literal characters in SEP-2564 patterns, so a glob
/// holding one is matched here, never sent.
pub fn expressible(glob: &str) -> bool {
    !glob.contains(['{', '}'])
}

/// The URI globs for a name glob: a URI one of whose segments matches `glob`
/// (`**/glob`, `**/glob/**`), since in a URI `*` stays within a segment. A glob naming a
/// `/` is already about whole URIs and is kept as it is.
pub fn in_any_segment(glob: &str) -> Vec<String> {
    if glob.contains('/') {
        vec![glob.to_owned()]
    } else {
        vec![format!("**/{glob}"), format!("**/{glob}/**")]
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
        if uri.is_some() {
            self.require(Feature::ScopedList, "resources/list with a uri")?;
        }
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
        let rule = compile(filter)?;
        let by_server = self.filters(filter);
        let sent = by_server.then(|| filter.clone());
        let (rule, sent) = (rule.as_ref(), &sent);
        let all = crate::paging::collect(max_pages, |cursor| async move {
            let page = self
                .list_resources_filtered(cursor, uri.map(str::to_owned), sent.clone())
                .await?;
            let kept = page.resources.into_iter();
            Ok((
                kept.filter(|r| passes(rule, &r.name, &r.uri)).collect(),
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
        let rule = compile(filter)?;
        let by_server = self.filters(filter);
        let sent = by_server.then(|| filter.clone());
        let (rule, sent) = (rule.as_ref(), &sent);
        let all = crate::paging::collect(max_pages, |cursor| async move {
            let page = self.list_templates_filtered(cursor, sent.clone()).await?;
            let kept = page.resource_templates.into_iter();
            Ok((
                kept.filter(|t| passes(rule, &t.name, &t.uri_template))
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

    /// Resources (of `uri`, or all) whose name matches one of `names` **or** whose URI
    /// matches one of `uris` (see [`in_any_segment`]). A filter's fields are ANDed, so on a
    /// server that filters this is two filtered listings (names, then URIs) merged, each
    /// resource once; elsewhere one listing matched here.
    pub async fn search_resources(
        &self,
        uri: Option<&str>,
        names: &[String],
        uris: &[String],
        max_pages: usize,
    ) -> Result<Filtered<Resource>, ClientError> {
        let by_name = ListFilter {
            name_patterns: Some(names.to_vec()),
            uri_patterns: None,
        };
        let by_uri = ListFilter {
            name_patterns: None,
            uri_patterns: Some(uris.to_vec()),
        };
        if !(self.filters(&by_name) && self.filters(&by_uri)) {
            let names = compile(&by_name)?;
            let uris = compile(&by_uri)?;
            let everything = self
                .list_matching(uri, &ListFilter::default(), max_pages)
                .await?;
            let wanted = |r: &Resource| {
                names.as_ref().is_some_and(|f| f.matches(&r.name, &r.uri))
                    || uris.as_ref().is_some_and(|f| f.matches(&r.name, &r.uri))
            };
            return Ok(Filtered {
                items: everything.items.into_iter().filter(wanted).collect(),
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

    #[test]
    fn a_word_is_found_anywhere_in_a_name_and_in_any_segment_of_a_uri() {
        assert_eq!(anywhere("guide"), "*guide*");
        assert_eq!(anywhere("*.md"), "*.md");
        let uris = ListFilter {
            name_patterns: None,
            uri_patterns: Some(in_any_segment(&anywhere("guide"))),
        };
        let f = compile(&uris).unwrap().unwrap();
        assert!(f.matches("x", "file:///docs/guide.md"));
        assert!(f.matches("x", "file:///guides/a.md"));
        assert!(f.matches("x", "sample:guide"));
        assert!(!f.matches("x", "file:///docs/manual.md"));
        assert_eq!(in_any_segment("file:///docs/*"), ["file:///docs/*"]);
    }

    #[test]
    fn an_invalid_filter_is_an_error_naming_the_pattern() {
        let bad = ListFilter {
            name_patterns: Some(vec!["[a".into()]),
            uri_patterns: None,
        };
        let e = compile(&bad).unwrap_err().to_string();
        assert!(e.contains("namePatterns[0]"), "{e}");
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
