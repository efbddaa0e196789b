//! Watching resources: subscriptions in the way the connection's revision offers, and
//! the changes reported for them.
//!
//! Invariants: a client watches once (the watch takes its notifications); only changes
//! to URIs the server accepted are reported (in 2026-07-28, those its acknowledgement
//! names, awaited within the request timeout), and list changes only when asked (and in
//! 2026-07-28 accepted); dropping a [`Watch`] ends its listen stream. [`Watch::change`]
//! moves a watch to other URIs: in 2026-07-28 the old stream ends only once the new one is
//! acknowledged, and changes that arrive meanwhile are kept, so nothing is missed.

use std::time::Duration;

use rsrc_protocol::methods;
use rsrc_protocol::resources::ResourceParams;
use rsrc_protocol::subscriptions::{SubscriptionFilter, SubscriptionsListenParams};

use crate::client::Client;
use crate::error::ClientError;
use crate::io::Notification;
use crate::link::Link;

/// A change a server reported on a [`Watch`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// The resource at this URI changed.
    Updated(String),
    /// The set of resources changed.
    ListChanged,
}

/// Subscriptions to resources (`resources/subscribe` in the 2025 revisions, one
/// `subscriptions/listen` stream in 2026-07-28) and the changes reported for them. Dropping
/// it ends a listen stream; legacy subscriptions end with the connection.
#[derive(Debug)]
pub struct Watch {
    notes: tokio::sync::mpsc::Receiver<Notification>,
    /// Notifications read while waiting for an acknowledgement, in order.
    held: std::collections::VecDeque<Notification>,
    accepted: Vec<String>,
    list_changes: bool,
    stream: Option<tokio::task::JoinHandle<()>>,
}

impl Watch {
    /// The URIs the server agreed to report on.
    pub fn accepted(&self) -> &[String] {
        &self.accepted
    }

    /// The next change, or `None` once the connection (or the listen stream) ended.
    pub async fn next(&mut self) -> Option<Change> {
        loop {
            let note = match self.held.pop_front() {
                Some(note) => note,
                None => self.notes.recv().await?,
            };
            match note.method.as_str() {
                "notifications/resources/updated" => {
                    if let Some(uri) = note.params.get("uri").and_then(|u| u.as_str())
                        && self.accepted.iter().any(|a| a == uri)
                    {
                        return Some(Change::Updated(uri.to_owned()));
                    }
                }
                "notifications/resources/list_changed" if self.list_changes => {
                    return Some(Change::ListChanged);
                }
                _ => {}
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            stream.abort();
        }
    }
}

/// How long a listen request may stay open: for as long as anyone watches.
const LISTEN_FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

impl Client {
    /// Subscribes to `uris` (and to list changes when `list_changes`), in the way the
    /// connection's revision offers. Takes the client's notifications: a client watches
    /// once.
    pub async fn watch(&self, uris: &[String], list_changes: bool) -> Result<Watch, ClientError> {
        let notes = self.take_notifications().ok_or_else(|| {
            ClientError::Protocol("this client's notifications are already taken".into())
        })?;
        let mut watch = Watch {
            notes,
            held: std::collections::VecDeque::new(),
            accepted: Vec::new(),
            list_changes,
            stream: None,
        };
        if !self.server.version.is_modern() {
            for uri in uris {
                self.request::<methods::Subscribe>(&ResourceParams {
                    uri: uri.clone(),
                    meta: None,
                })
                .await?;
            }
            watch.accepted = uris.to_vec();
            return Ok(watch);
        }
        self.listen(&mut watch, uris, list_changes).await?;
        Ok(watch)
    }

    /// Opens a `subscriptions/listen` stream for `uris` and waits for its
    /// acknowledgement, keeping what else arrives meanwhile; then `watch` reports what
    /// the acknowledgement accepted, and its previous stream (if any) is ended.
    async fn listen(
        &self,
        watch: &mut Watch,
        uris: &[String],
        list_changes: bool,
    ) -> Result<(), ClientError> {
        let params = SubscriptionsListenParams {
            notifications: SubscriptionFilter {
                resources_list_changed: list_changes.then_some(true),
                resource_subscriptions: Some(uris.to_vec()),
                ..SubscriptionFilter::default()
            },
            meta: None,
        };
        let stream = match &*self.conn {
            Link::Stream(_) => {
                let client = self.clone();
                tokio::spawn(async move {
                    let r = client
                        .conn
                        .request::<methods::SubscriptionsListen>(
                            &params,
                            client.meta().as_ref(),
                            LISTEN_FOREVER,
                        )
                        .await;
                    tracing::debug!(outcome = ?r.map(drop), "the listen stream ended");
                })
            }
            #[cfg(feature = "http")]
            Link::Http(h) => {
                let value = serde_json::to_value(&params)
                    .map_err(|e| ClientError::Protocol(format!("cannot encode the filter: {e}")))?;
                let meta = self.meta().unwrap_or_default();
                h.listen(value, &meta).await?
            }
        };
        // Ends the new stream if the acknowledgement does not come.
        struct AbortOnDrop(Option<tokio::task::JoinHandle<()>>);
        impl Drop for AbortOnDrop {
            fn drop(&mut self) {
                if let Some(s) = self.0.take() {
                    s.abort();
                }
            }
        }
        let mut stream = AbortOnDrop(Some(stream));
        // The acknowledgement says what will be reported.
        let timeout = self.conn.options().request_timeout;
        let (notes, held) = (&mut watch.notes, &mut watch.held);
        let ack = tokio::time::timeout(timeout, async {
            while let Some(note) = notes.recv().await {
                if note.method == "notifications/subscriptions/acknowledged" {
                    return Some(note);
                }
                if held.len() < HELD_MAX {
                    held.push_back(note);
                }
            }
            None
        })
        .await
        .map_err(|_| ClientError::Timeout)?
        .ok_or(ClientError::Closed)?;
        let accepted: SubscriptionFilter = ack
            .params
            .get("notifications")
            .and_then(|n| serde_json::from_value(n.clone()).ok())
            .unwrap_or_default();
        watch.accepted = accepted.resource_subscriptions.unwrap_or_default();
        watch.list_changes = accepted.resources_list_changed == Some(true);
        if let Some(old) = std::mem::replace(&mut watch.stream, stream.0.take()) {
            old.abort();
        }
        Ok(())
    }
}

/// Most notifications kept while a new listen stream awaits its acknowledgement.
const HELD_MAX: usize = 1024;

impl Watch {
    /// Moves this watch to `uris` (and list changes when `list_changes`), in the way the
    /// revision offers: in the 2025 revisions by subscribing to the new URIs and
    /// unsubscribing from those left (a URI the server refuses is not accepted, the rest
    /// go on); in 2026-07-28 with a new listen stream that replaces the old one once
    /// acknowledged. `client` must be the client this watch came from.
    pub async fn change(
        &mut self,
        client: &Client,
        uris: &[String],
        list_changes: bool,
    ) -> Result<(), ClientError> {
        if client.server.version.is_modern() {
            return client.listen(self, uris, list_changes).await;
        }
        let mut accepted = Vec::with_capacity(uris.len());
        for uri in uris {
            if self.accepted.contains(uri) {
                accepted.push(uri.clone());
                continue;
            }
            let params = ResourceParams {
                uri: uri.clone(),
                meta: None,
            };
            match client.request::<methods::Subscribe>(&params).await {
                Ok(_) => accepted.push(uri.clone()),
                Err(ClientError::Rpc(e)) => {
                    tracing::debug!(%uri, error = %e.message, "the server refused a subscription");
                }
                Err(e) => return Err(e),
            }
        }
        for uri in self.accepted.iter().filter(|u| !uris.contains(u)) {
            let params = ResourceParams {
                uri: uri.clone(),
                meta: None,
            };
            match client.request::<methods::Unsubscribe>(&params).await {
                Ok(_) | Err(ClientError::Rpc(_)) => {}
                Err(e) => return Err(e),
            }
        }
        self.accepted = accepted;
        self.list_changes = list_changes;
        Ok(())
    }
}
