//! The engine's typed listing pages as rmcp's, a page's resources decoded into rmcp's
//! `Resource` once rather than every time the page is listed again.
//!
//! Providers that list the same resources again and again hand them out already encoded
//! ([`ListEntry::encoded`]); the rmcp form of a page of those is kept here with the
//! page's entries, so listing the page again costs a comparison of each entry with the
//! kept one (of pointers, while the provider hands out the same encodings) and a clone of
//! the page (what a hand-written rmcp server pays to clone its own table), not a JSON
//! decode of every resource.
//!
//! [`Listed::prepare`] walks the engine's default listing once without a client, so that
//! a server that indexes at start answers even its first listing from the table.
//!
//! Invariants: a page's rmcp form is what rmcp's own decoding of the engine's encoding
//! gives, so a page is the same on the wire with or without the table; a kept page
//! answers only a page whose entries all have the same encodings, so a resource that changed is
//! never answered from an older form; the table holds the forms of at most
//! [`MAX_ENTRIES`] resources, and starts again empty when full.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ListResourcesResult, Resource};
use rsrc::protocol::jsonrpc::RequestId;
use rsrc::protocol::resources;
use rsrc::server::{HostRequest, Outcome, Reply};
use rsrc::{ListEntry, Server};

/// Most resources whose rmcp forms are kept (about 0.5 KB each with their encoding): a
/// listing of this many resources is answered from the table on every pass after the
/// first.
pub(crate) const MAX_ENTRIES: usize = 1 << 16;

/// A page of encoded entries and its rmcp form.
struct Page {
    entries: Vec<ListEntry>,
    resources: Vec<Resource>,
}

/// The rmcp forms of the pages listed so far, keyed by the encoding of their first entry.
#[derive(Default)]
pub(crate) struct Listed {
    pages: Mutex<Pages>,
}

#[derive(Default)]
struct Pages {
    by_first: HashMap<Box<str>, Arc<Page>>,
    entries: usize,
}

impl std::fmt::Debug for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listed").finish_non_exhaustive()
    }
}

impl Listed {
    /// A page (already fitted to its revision by the engine) as rmcp's.
    pub(crate) fn page(
        &self,
        page: resources::ListResourcesResult<ListEntry>,
    ) -> Result<ListResourcesResult, serde_json::Error> {
        let resources::ListResourcesResult {
            resources,
            next_cursor,
            result_type,
            ttl_ms,
            cache_scope,
            meta,
        } = page;
        let mut out = ListResourcesResult::with_all_items(self.resources(&resources)?);
        out.next_cursor = next_cursor;
        out.result_type = result_type.map(|_| rmcp::model::ResultType::COMPLETE);
        out.ttl_ms = ttl_ms;
        out.cache_scope = cache_scope.map(crate::convert::cache_scope_of);
        out.meta = crate::convert::result_meta(meta);
        Ok(out)
    }

    /// The entries in rmcp's form: the kept page's if its entries have the same
    /// encodings, else decoded (and kept, if every entry is an encoded one).
    fn resources(&self, entries: &[ListEntry]) -> Result<Vec<Resource>, serde_json::Error> {
        let Some(first) = entries.first().and_then(ListEntry::encoding) else {
            return entries.iter().map(decode).collect();
        };
        let kept = self.lock().by_first.get(first).cloned();
        if let Some(kept) = &kept
            && kept.entries.len() == entries.len()
            && kept
                .entries
                .iter()
                .zip(entries)
                .all(|(k, e)| k.same_encoding(e))
        {
            return Ok(kept.resources.clone());
        }
        let resources = entries.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
        // Only encoded entries are listed again as they are; typed ones are built anew.
        if entries.len() <= MAX_ENTRIES && entries.iter().all(|e| e.encoding().is_some()) {
            let page = Arc::new(Page {
                entries: entries.to_vec(),
                resources: resources.clone(),
            });
            let mut pages = self.lock();
            if pages.entries + entries.len() > MAX_ENTRIES {
                *pages = Pages::default();
            }
            pages.entries += entries.len();
            if let Some(old) = pages.by_first.insert(first.into(), page) {
                pages.entries -= old.resources.len();
            }
        }
        Ok(resources)
    }

    /// Lists the pages of the engine's default listing (at most `max_pages`, and no more
    /// than the table keeps), as a client would, and keeps their rmcp forms
    /// (`Resources::prepare_listing`). Stops at the first error.
    pub(crate) async fn prepare(&self, server: &Server, max_pages: usize) {
        // A client of no connection, speaking 2026-07-28 on a session of its own.
        let session = server.open_session(None, rsrc::Notifier::discard());
        let mut cursor: Option<String> = None;
        for _ in 0..max_pages {
            let meta = rsrc::protocol::meta::RequestMeta::modern(
                rsrc::protocol::ProtocolVersion::LATEST.as_str(),
                server.info().clone(),
            );
            let params = resources::ListResourcesParams {
                cursor: cursor.take(),
                meta: Some(meta),
                ..Default::default()
            };
            let request = server.prepare_typed(RequestId::Number(0), HostRequest::List(params));
            let reply = match server.run(&session, request, &rsrc::Notifier::discard()) {
                Outcome::Running(running) => running.await,
                Outcome::Refused(_) | Outcome::Answered(_) => None,
            };
            let Some(Ok(page)) =
                reply.map(Reply::into_typed::<resources::ListResourcesResult<ListEntry>>)
            else {
                return;
            };
            cursor.clone_from(&page.next_cursor);
            let size = page.resources.len();
            if self.page(page).is_err() || cursor.is_none() {
                return;
            }
            // The next page would start the table again: the first pages, the ones a
            // client asks for first, are kept.
            if self.lock().entries + size > MAX_ENTRIES {
                return;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pages> {
        self.pages.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An entry as rmcp's `Resource`, as rmcp decodes the engine's encoding of it.
fn decode(entry: &ListEntry) -> Result<Resource, serde_json::Error> {
    match entry.encoding() {
        Some(json) => serde_json::from_str(json),
        None => serde_json::from_slice(&serde_json::to_vec(entry)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsrc::protocol::Resource;

    fn page(resources: Vec<ListEntry>) -> resources::ListResourcesResult<ListEntry> {
        resources::ListResourcesResult {
            resources,
            next_cursor: Some("next".into()),
            result_type: None,
            ttl_ms: None,
            cache_scope: None,
            meta: None,
        }
    }

    /// What rmcp's own decoding of the engine's encoding of `page` gives.
    fn decoded(page: &resources::ListResourcesResult<ListEntry>) -> ListResourcesResult {
        serde_json::from_slice(&serde_json::to_vec(page).unwrap()).unwrap()
    }

    #[test]
    fn a_page_listed_again_is_answered_as_decoded_and_a_changed_resource_anew() {
        let listed = Listed::default();
        let a = ListEntry::encoded(Resource::new("t:///a", "a").with_mime_type("text/plain"));
        let b = ListEntry::encoded(Resource::new("t:///b", "b \"quoted\" é"));
        let first = page(vec![a.clone(), b]);
        let out = listed.page(first.clone()).unwrap();
        assert_eq!(out, decoded(&first));
        assert_eq!(listed.lock().entries, 2);
        assert_eq!(listed.page(first.clone()).unwrap(), decoded(&first));

        let b2 = ListEntry::encoded(Resource::new("t:///b", "b").with_mime_type("text/markdown"));
        let changed = page(vec![a, b2]);
        let out = listed.page(changed.clone()).unwrap();
        assert_eq!(out, decoded(&changed));
        assert_eq!(out.resources[1].mime_type.as_deref(), Some("text/markdown"));
        assert_eq!(
            listed.lock().entries,
            2,
            "the changed page replaced the kept one"
        );
    }

    #[tokio::test]
    async fn preparing_the_listing_keeps_every_page_up_to_the_bound() {
        let mut set = rsrc::ResourceSet::new();
        for i in 0..5 {
            set = set.with_text(Resource::new(format!("t:///{i}"), format!("{i}")), "x");
        }
        let server = rsrc::Server::builder("t", "1")
            .mount("t:", set)
            .config(rsrc::ServerConfig {
                page_size: 2,
                ..rsrc::ServerConfig::default()
            })
            .build()
            .unwrap();
        let listed = Listed::default();
        listed.prepare(&server, 2).await;
        assert_eq!(listed.lock().entries, 4, "two pages of two");
        listed.prepare(&server, 10).await;
        assert_eq!(listed.lock().entries, 5, "the three pages");
    }

    #[test]
    fn typed_entries_are_decoded_every_time_and_not_kept() {
        let listed = Listed::default();
        let typed = page(vec![ListEntry::from(Resource::new("t:///a", "a"))]);
        assert_eq!(listed.page(typed.clone()).unwrap(), decoded(&typed));
        assert_eq!(listed.lock().entries, 0);
    }
}
