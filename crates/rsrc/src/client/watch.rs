//! Watching resources: subscriptions in the way the connection's revision offers, and
//! the changes reported for them.
//!
//! Invariants: a client watches once (the watch takes its notifications); only changes
//! to URIs the server accepted are reported (in 2026-07-28, those its acknowledgement
//! names, awaited within the request timeout), and list changes only when asked (and in
//! 2026-07-28 accepted); dropping a [`Watch`] ends its listen stream.

use std::time::Duration;

use rsrc_protocol::methods;
use rsrc_protocol::resources::ResourceParams;
use rsrc_protocol::subscriptions::{SubscriptionFilter, SubscriptionsListenParams};

use super::{Client, ClientError, Link, Notification};

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
            let note = self.notes.recv().await?;
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
        let mut notes = self.take_notifications().ok_or_else(|| {
            ClientError::Protocol("this client's notifications are already taken".into())
        })?;
        if !self.server.version.is_modern() {
            for uri in uris {
                self.request::<methods::Subscribe>(&ResourceParams {
                    uri: uri.clone(),
                    meta: None,
                })
                .await?;
            }
            return Ok(Watch {
                notes,
                accepted: uris.to_vec(),
                list_changes,
                stream: None,
            });
        }
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
                Some(tokio::spawn(async move {
                    let r = client
                        .conn
                        .request::<methods::SubscriptionsListen>(
                            &params,
                            client.meta().as_ref(),
                            LISTEN_FOREVER,
                        )
                        .await;
                    tracing::debug!(outcome = ?r.map(drop), "the listen stream ended");
                }))
            }
            #[cfg(feature = "http-client")]
            Link::Http(h) => {
                let value = serde_json::to_value(&params)
                    .map_err(|e| ClientError::Protocol(format!("cannot encode the filter: {e}")))?;
                let meta = self.meta().unwrap_or_default();
                Some(h.listen(value, &meta).await?)
            }
        };
        // The acknowledgement says what will be reported.
        let timeout = self.conn.options().request_timeout;
        let ack = tokio::time::timeout(timeout, async {
            while let Some(note) = notes.recv().await {
                if note.method == "notifications/subscriptions/acknowledged" {
                    return Some(note);
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
        Ok(Watch {
            notes,
            accepted: accepted.resource_subscriptions.unwrap_or_default(),
            list_changes: accepted.resources_list_changed == Some(true),
            stream,
        })
    }
}
