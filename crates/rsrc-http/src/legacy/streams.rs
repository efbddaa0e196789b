//! A shared session's streams through the store: holding stream 0 (the instance serving
//! the GET stream), and following a POST stream that another instance writes.
//!
//! Invariants:
//! - Only the holder's copy of stream 0 takes notifications. A claim is numbered: a
//!   claim made here or elsewhere after this one decides, so a copy loaded before it
//!   cannot take the stream back; unmuting is decided under the copy's lock.
//! - Taking stream 0 over from another instance replays the stored events after the
//!   client's `Last-Event-ID`, numbers on after both what the store has and what the
//!   client saw, and re-announces every subscription (notifications may have been lost
//!   with the previous holder, or the stored log has a hole).
//! - A stored stream whose entries are not consecutive is never replayed: stream 0's
//!   missed events are re-announced instead, a POST stream cannot be resumed.
//! - A followed POST stream ends at its end marker, when it turns out broken, when its
//!   session ends, or once its writer has looked dead for the whole liveness grace
//!   period.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::response::Response;

use rsrc::server::Server;
use rsrc::sessions::{Keep, Lookup};

use super::records::restore;
use super::refusals::store_unavailable;
use crate::lock::lock;
use crate::sse::StreamLog;
use crate::state::Endpoint;
use crate::table::HttpSession;

/// How often a shared session's stored copy is polled for new events of a POST stream
/// that another instance writes.
const FOLLOW_EVERY: Duration = Duration::from_millis(200);

/// Makes this instance the holder of the session's standalone stream. Taking it over
/// from another instance, it replays the stored events after `after` (a resumption),
/// continues their numbering, and re-announces every subscription (notifications may
/// have been lost with the previous holder, or the stored log has a hole). `false` if
/// the session no longer exists.
pub(crate) async fn hold(sh: &Endpoint, session: &HttpSession, after: Option<u64>) -> bool {
    let Some(m) = &session.mirror else {
        return true;
    };
    let mut claim = m.store.claim(&session.name).await;
    if let Ok(Lookup::Missing) = claim {
        // The store lost the session: this copy puts it back, then claims it.
        if restore(sh, session).await == Lookup::Deleted {
            return false;
        }
        claim = m.store.claim(&session.name).await;
    }
    let claim = match claim {
        Ok(Lookup::Found(claim)) => claim,
        Ok(Lookup::Deleted) => {
            sh.sessions.remove(&session.name);
            return false;
        }
        Ok(Lookup::Missing) => {
            tracing::warn!(
                "the session store keeps losing a session: its stream is served from this instance's copy"
            );
            let _sync = lock(&session.sync);
            session.standalone.mute(false);
            return true;
        }
        Err(e) => {
            // Redis away: serve the stream from this instance's copy.
            tracing::warn!(error = %e, "cannot claim a session's stream in the store");
            let _sync = lock(&session.sync);
            session.standalone.mute(false);
            return true;
        }
    };
    let here = claim.previous.as_deref() == Some(m.store.instance());
    {
        let mut sync = lock(&session.sync);
        sync.claimed = sync.claimed.max(claim.number);
        sync.claims = sync.claims.max(claim.number);
        if here && !session.standalone.is_muted() {
            return true;
        }
    }
    // Notifications may have been lost only if another instance held it.
    let moved = claim.previous.is_some() && !here;
    let (events, broken) = match after {
        Some(after) => match m
            .store
            .read(&session.name, 0, after, session.standalone.keep())
            .await
        {
            Ok(tail) if tail.broken => {
                tracing::info!("the stored stream lost events: they are re-announced instead");
                (Vec::new(), true)
            }
            Ok(tail) => (tail.events, false),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a stored stream: its missed events are re-announced instead");
                (Vec::new(), true)
            }
        },
        None => (Vec::new(), false),
    };
    let sync = lock(&session.sync);
    if sync.claimed != claim.number || sync.others > claim.number {
        // Claimed again meanwhile, here or elsewhere: that claim decides.
        return true;
    }
    // Numbered after what the store has, and after what the client saw.
    session
        .standalone
        .seed(events, claim.last.max(after.unwrap_or(0)));
    session.standalone.mute(false);
    drop(sync);
    if moved || broken {
        Server::resync_session(&session.engine);
    }
    true
}

/// A POST stream another instance writes (or wrote), followed from the store. `None` if
/// the store does not know it, or lost some of its events (it cannot be resumed).
pub(crate) async fn stored_stream(
    sh: &Arc<Endpoint>,
    session: &Arc<HttpSession>,
    stream: u64,
    after: u64,
) -> Result<Option<Arc<StreamLog>>, Response> {
    let Some(m) = session.mirror.clone() else {
        return Ok(None);
    };
    let limits = sh.log_limits();
    let keep = Keep {
        events: limits.max_events,
        bytes: limits.max_bytes,
    };
    let tail = match m.store.read(&session.name, stream, after, keep).await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read a stored stream");
            return Err(store_unavailable("cannot resume the stream"));
        }
    };
    if !tail.known {
        return Ok(None);
    }
    if tail.broken {
        tracing::info!("a stored stream lost events: it cannot be resumed");
        return Ok(None);
    }
    let log = StreamLog::new(stream, limits, None);
    let mut last = after;
    if let Some((seq, _)) = tail.events.last() {
        last = *seq;
    }
    log.seed(tail.events, after);
    session.keep_stream(Arc::clone(&log));
    if tail.ended {
        log.close();
        return Ok(Some(log));
    }
    let (follower, ended) = (Arc::clone(&log), session.ended.clone());
    let (session, grace) = (Arc::clone(session), m.store.liveness_grace());
    // The writer counts as gone only once it has looked dead for the whole grace period.
    let mut dead_since = (!tail.writer_alive).then(Instant::now);
    tokio::spawn(async move {
        loop {
            if dead_since.is_some_and(|t| t.elapsed() > grace) {
                tracing::info!("the instance running a resumed request is gone: its stream ends");
                break;
            }
            tokio::select! {
                () = ended.cancelled() => break,
                () = tokio::time::sleep(FOLLOW_EVERY) => {}
            }
            match m.store.read(&session.name, stream, last, keep).await {
                Ok(tail) if tail.broken => {
                    tracing::info!("a followed stream lost events in the store: it ends");
                    session.forget_stream(&follower);
                    break;
                }
                Ok(tail) => {
                    if let Some((seq, _)) = tail.events.last() {
                        last = *seq;
                    }
                    follower.extend(tail.events);
                    if tail.ended {
                        break;
                    }
                    if tail.writer_alive {
                        dead_since = None;
                    } else {
                        dead_since.get_or_insert_with(Instant::now);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "cannot follow a stored stream"),
            }
        }
        follower.close();
    });
    Ok(Some(log))
}
