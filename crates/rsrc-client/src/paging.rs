//! Listings that follow cursors: all at once ([`Collected`]) or as a stream read page by
//! page.
//!
//! Invariants: at most `max_pages` pages are fetched (at least one); a cursor the server
//! repeats stops the listing with an error, so a misbehaving server cannot make it run
//! forever; items come in server order.

use rsrc_protocol::{Resource, ResourceTemplate};

use crate::client::Client;
use crate::error::ClientError;

/// Every item of a paginated listing, and whether the page cap cut it short.
#[derive(Debug, Clone, Default)]
pub struct Collected<T> {
    /// The items, in server order.
    pub items: Vec<T>,
    /// `true` if more pages existed beyond the cap.
    pub truncated: bool,
}

impl Client {
    /// Every resource (or every child of `uri`), following cursors for at most `max_pages`
    /// pages.
    pub async fn list_all_resources(
        &self,
        uri: Option<&str>,
        max_pages: usize,
    ) -> Result<Collected<Resource>, ClientError> {
        collect(max_pages, |cursor| async move {
            let page = self.list_resources(cursor, uri.map(str::to_owned)).await?;
            Ok((page.resources, page.next_cursor))
        })
        .await
    }

    /// Every template, following cursors for at most `max_pages` pages.
    pub async fn list_all_templates(
        &self,
        max_pages: usize,
    ) -> Result<Collected<ResourceTemplate>, ClientError> {
        collect(max_pages, |cursor| async move {
            let page = self.list_templates(cursor).await?;
            Ok((page.resource_templates, page.next_cursor))
        })
        .await
    }

    /// Every resource (or every child of `collection`), page after page as they are
    /// needed, for at most `max_pages` pages (then an error names the cap).
    pub fn resources(
        &self,
        collection: Option<String>,
        max_pages: usize,
    ) -> impl futures_util::Stream<Item = Result<Resource, ClientError>> + '_ {
        paged(max_pages, move |cursor| {
            let uri = collection.clone();
            async move {
                let page = self.list_resources(cursor, uri).await?;
                Ok((page.resources, page.next_cursor))
            }
        })
    }

    /// Every template, page after page, for at most `max_pages` pages.
    pub fn templates(
        &self,
        max_pages: usize,
    ) -> impl futures_util::Stream<Item = Result<ResourceTemplate, ClientError>> + '_ {
        paged(max_pages, move |cursor| async move {
            let page = self.list_templates(cursor).await?;
            Ok((page.resource_templates, page.next_cursor))
        })
    }
}

/// Items of a paginated listing as a stream: pages fetched as the stream is read, cursors
/// followed for at most `max_pages` pages, a repeated cursor an error.
fn paged<'a, T, F, Fut>(
    max_pages: usize,
    fetch: F,
) -> impl futures_util::Stream<Item = Result<T, ClientError>> + 'a
where
    T: 'a,
    F: Fn(Option<String>) -> Fut + 'a,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ClientError>> + 'a,
{
    struct State<T> {
        buffered: std::collections::VecDeque<T>,
        cursor: Option<String>,
        pages: usize,
        seen: std::collections::HashSet<String>,
        done: bool,
    }
    let state = State {
        buffered: std::collections::VecDeque::new(),
        cursor: None,
        pages: 0,
        seen: std::collections::HashSet::new(),
        done: false,
    };
    futures_util::stream::unfold((state, fetch), move |(mut st, fetch)| async move {
        loop {
            if let Some(item) = st.buffered.pop_front() {
                return Some((Ok(item), (st, fetch)));
            }
            if st.done {
                return None;
            }
            if st.pages == max_pages.max(1) {
                st.done = true;
                let e = ClientError::Protocol(format!("more than {max_pages} pages: stopped"));
                return Some((Err(e), (st, fetch)));
            }
            st.pages += 1;
            match fetch(st.cursor.take()).await {
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), (st, fetch)));
                }
                Ok((items, next)) => {
                    st.buffered.extend(items);
                    match next {
                        None => st.done = true,
                        Some(c) if !st.seen.insert(c.clone()) => {
                            st.done = true;
                            let e = ClientError::Protocol(format!(
                                "the server repeated the cursor {c:?}"
                            ));
                            st.buffered.clear();
                            return Some((Err(e), (st, fetch)));
                        }
                        Some(c) => st.cursor = Some(c),
                    }
                }
            }
        }
    })
}

/// Follows cursors: `fetch(cursor)` returns a page and the next cursor.
pub(crate) async fn collect<T, F, Fut>(
    max_pages: usize,
    mut fetch: F,
) -> Result<Collected<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
{
    let mut out = Collected {
        items: Vec::new(),
        truncated: false,
    };
    let mut seen = std::collections::HashSet::new();
    let mut cursor = None;
    for _ in 0..max_pages.max(1) {
        let (items, next) = fetch(cursor).await?;
        out.items.extend(items);
        match next {
            None => return Ok(out),
            Some(c) if !seen.insert(c.clone()) => {
                return Err(ClientError::Protocol(format!(
                    "the server repeated the cursor {c:?}"
                )));
            }
            Some(c) => cursor = Some(c),
        }
    }
    out.truncated = true;
    Ok(out)
}
