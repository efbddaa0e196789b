//! `resources/subscribe` and `unsubscribe` (2025 revisions) and `subscriptions/listen`
//! (2026-07-28).
//!
//! Invariants: a URI is subscribed only if its provider offers subscriptions and accepts
//! it; a listen stream's acknowledgement goes out before anything can be delivered on it;
//! subscriptions per session or stream stay within `ServerConfig::max_subscriptions`.

use rsrc_protocol::ResultMeta;
use rsrc_protocol::lifecycle::EmptyResult;
use rsrc_protocol::resources::ResourceParams;

use std::sync::Arc;

use rsrc_protocol::meta::NotificationMeta;
use rsrc_protocol::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams,
    SubscriptionsListenResult,
};

use super::checks::canonicalize;
use crate::changes::{Listener, TooMany};
use crate::context::{Notification, RequestContext};
use crate::error::RequestError;
use crate::server::hosted::HeldChanges;
use crate::server::inside::ServerState;
use crate::server::session::Session;

/// The session's listener, made on first use.
pub(in crate::server) fn listener_of<'s>(
    srv: &ServerState,
    session: &'s Session,
) -> &'s Arc<Listener> {
    session.listener(|| srv.listener(session.notifier().clone(), None))
}

/// Checks that `uri` can be subscribed to: a well-formed URI, served by a provider
/// that offers subscriptions and accepts this one.
async fn check_subscribable(
    srv: &ServerState,
    ctx: &RequestContext,
    uri: &str,
) -> Result<(), RequestError> {
    let (_, mount) = srv.route(uri)?;
    if !mount.capabilities().subscribe {
        return Err(RequestError::InvalidParams(format!(
            "{uri} does not support subscriptions"
        )));
    }
    mount.provider.subscribe(ctx, uri).await?;
    Ok(())
}

/// Refuses `method` as unknown when no provider offers subscriptions.
fn subscriptions_offered(srv: &ServerState, method: &str) -> Result<(), RequestError> {
    if srv.offers_subscriptions() {
        Ok(())
    } else {
        Err(RequestError::MethodNotFound(format!(
            "{method} (this server offers no subscriptions)"
        )))
    }
}

/// `resources/subscribe` on `session`.
pub(in crate::server) async fn subscribe(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    mut p: ResourceParams,
    session: Arc<Session>,
) -> Result<EmptyResult, RequestError> {
    subscriptions_offered(&srv, "resources/subscribe")?;
    canonicalize(&srv, &mut p.uri)?;
    check_subscribable(&srv, &ctx, &p.uri).await?;
    listener_of(&srv, &session)
        .subscribe(&p.uri)
        .map_err(|TooMany(max)| {
            RequestError::InvalidParams(format!("a session may hold at most {max} subscriptions"))
        })?;
    Ok(EmptyResult::default())
}

/// `resources/unsubscribe` on `session`: succeeds whether or not it was subscribed.
pub(in crate::server) async fn unsubscribe(
    srv: Arc<ServerState>,
    _ctx: RequestContext,
    mut p: ResourceParams,
    session: Arc<Session>,
) -> Result<EmptyResult, RequestError> {
    subscriptions_offered(&srv, "resources/unsubscribe")?;
    canonicalize(&srv, &mut p.uri)?;
    listener_of(&srv, &session).unsubscribe(&p.uri);
    Ok(EmptyResult::default())
}

/// `subscriptions/listen`: acknowledges what will be delivered, then delivers it until
/// the client cancels (closing the stream, or `notifications/cancelled` on stdio), or
/// until the transport closes, when the completion result ends it. A stream whose host
/// acknowledged it already comes with the changes `held` since: it keeps those of what is
/// accepted here, and hears them once acknowledged.
pub(in crate::server) async fn listen(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    p: SubscriptionsListenParams,
    held: Option<HeldChanges>,
) -> Result<SubscriptionsListenResult, RequestError> {
    let id = ctx.request_id().clone();
    let wanted = p.notifications;
    let max = srv.config().max_subscriptions;
    let mut accepted = SubscriptionFilter::default();
    if wanted.resources_list_changed == Some(true) && srv.publishes_list_changes() {
        accepted.resources_list_changed = Some(true);
    }
    if let Some(uris) = wanted.resource_subscriptions {
        let mut ok = Vec::new();
        if srv.offers_subscriptions() {
            for uri in uris {
                if ok.len() == max {
                    break;
                }
                let mut uri = uri;
                let checked = match canonicalize(&srv, &mut uri) {
                    Ok(()) => check_subscribable(&srv, &ctx, &uri).await,
                    Err(e) => Err(e),
                };
                match checked {
                    Ok(()) => ok.push(uri),
                    Err(e) => tracing::debug!(%uri, error = ?e, "subscription not accepted"),
                }
            }
        }
        accepted.resource_subscriptions = Some(ok);
    }
    let uris = accepted
        .resource_subscriptions
        .as_deref()
        .unwrap_or_default();
    let (listener, look_again) = match held {
        Some(held) => {
            for uri in held.listener.uris() {
                if !uris.contains(&uri) {
                    held.listener.forget(&uri);
                }
            }
            (held.listener, !held.heard_all)
        }
        None => (srv.parked_listener(), false),
    };
    // The acknowledgement goes out before anything can be delivered.
    ctx.notifier().send(Notification::Acknowledged(
        SubscriptionsAcknowledgedParams {
            notifications: accepted.clone(),
            meta: Some(NotificationMeta::for_subscription(id.clone())),
        },
    ));
    listener.start(ctx.notifier().clone(), Some(id.clone()));
    if accepted.resources_list_changed == Some(true) {
        listener.listen_to_lists();
    }
    for uri in uris {
        // Within the bound: at most `max` were accepted.
        let _ = listener.subscribe(uri);
    }
    if look_again {
        // A provider could not hear every change when the host acknowledged: what the
        // stream holds may have changed unheard.
        listener.resync();
    }
    // Runs until the client cancels (then no response follows) or the transport
    // closes (then the completion result ends the stream gracefully).
    ctx.closing().await;
    drop(listener);
    Ok(SubscriptionsListenResult {
        result_type: None,
        meta: ResultMeta {
            subscription_id: Some(id),
            ..ResultMeta::default()
        },
    })
}
