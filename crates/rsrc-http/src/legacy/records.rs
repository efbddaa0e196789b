//! A shared session's record in the [`SessionStore`]: what a copy knows of it, recording
//! a request's changes before it is answered ([`persist`]), applying the changes other
//! instances recorded ([`apply_record`], [`reload`]), and putting back a session the
//! store lost ([`restore`]).
//!
//! Invariants:
//! - A copy never applies a record older than the one it has; the changes it made and
//!   did not record yet stay on top of any record it applies.
//! - Reloads run one at a time, in the order asked, each copy's at most once however
//!   often it was asked for (every copy's once, however often that was asked for): a
//!   burst of announcements costs one reload. One the store could not answer is tried
//!   again a moment later.
//! - What a record says of the client is bounded ([`MAX_CLIENT`]).
//! - A copy mutes its stream 0 only for a claim made after its own: a record loaded
//!   before this instance claimed the stream says nothing about it. The decision is taken
//!   under the copy's lock.
//! - A session deleted elsewhere (a tombstone) ends the copy; one the store lost without
//!   a tombstone is put back from a copy still in use.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use rsrc_protocol::Implementation;
use rsrc_protocol::ProtocolVersion;
use rsrc_protocol::lifecycle::ClientCapabilities;

use rsrc::server::{Negotiated, Server};
use rsrc::sessions::{Lookup, Revision, SessionState, SessionStore, StoredSession};

use crate::lock::lock;
use crate::state::Endpoint;
use crate::table::{HttpSession, LOCAL_STREAMS, Reloads, Synced};

/// The most bytes a record holds of the client's information and capabilities; beyond,
/// only the client's name and version (each cut to [`MAX_NAME`]) are shared.
const MAX_CLIENT: usize = 4 * 1024;
/// The longest client name or version shared when the whole information is too large.
const MAX_NAME: usize = 256;
/// How long a reload the store could not answer waits before it is tried again.
const RELOAD_RETRY: Duration = Duration::from_secs(1);

/// What a record says of the client: its information and capabilities as `initialize`
/// gave them, or, when that is over [`MAX_CLIENT`] bytes, its name and version only.
fn client_record(n: &Negotiated) -> String {
    let whole = serde_json::json!({
        "clientInfo": n.client_info.as_deref(),
        "capabilities": &*n.capabilities,
    })
    .to_string();
    if whole.len() <= MAX_CLIENT {
        return whole;
    }
    tracing::debug!(
        bytes = whole.len(),
        "the client's information is too large to share whole: other instances see its name and version only"
    );
    let cut = |s: &str| {
        let mut end = s.len().min(MAX_NAME);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_owned()
    };
    let info = n
        .client_info
        .as_deref()
        .map(|i| serde_json::json!({"name": cut(&i.name), "version": cut(&i.version)}));
    serde_json::json!({"clientInfo": info, "capabilities": {}}).to_string()
}

impl HttpSession {
    /// The record of this session for the store, once initialized.
    pub(crate) fn record(&self) -> Option<StoredSession> {
        let n = self.engine.negotiated()?;
        Some(StoredSession::new(
            n.version.as_str().to_owned(),
            client_record(n),
        ))
    }

    /// A copy of a session another instance created; `None` if the record is not one
    /// this server can read.
    pub(crate) fn restore(sh: &Endpoint, name: Arc<str>, record: &StoredSession) -> Option<Self> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Client {
            client_info: Option<Implementation>,
            #[serde(default)]
            capabilities: ClientCapabilities,
        }
        let version = record.version.parse::<ProtocolVersion>().ok()?;
        let client: Client = serde_json::from_str(&record.client).ok()?;
        let session = HttpSession::new(name, &sh.stop, sh.log_limits(), sh.sessions.store.as_ref());
        session
            .engine
            .negotiated_elsewhere(Negotiated {
                version,
                client_info: client.client_info.map(Arc::new),
                capabilities: Arc::new(client.capabilities),
                at: std::time::Instant::now(),
            })
            .then_some(())?;
        sh.server
            .apply_session_state(&session.engine, &record.state);
        {
            let mut sync = lock(&session.sync);
            sync.saved = record.state.clone();
            sync.rev = record.rev;
            sync.claims = record.claims;
            if record
                .holder
                .as_deref()
                .is_some_and(|h| Some(h) != sh.sessions.store().map(|st| st.instance()))
            {
                sync.others = record.claims;
            }
        }
        Some(session)
    }

    /// This copy as a record, for re-creating a session the store lost: its state now,
    /// and this instance as the holder if its stream 0 is not muted.
    pub(crate) fn full_record(&self, store: &dyn SessionStore) -> Option<StoredSession> {
        let mut record = self.record()?;
        record.state = Server::session_state(&self.engine);
        let sync = lock(&self.sync);
        record.rev = sync.rev;
        record.claims = sync.claims.max(sync.claimed);
        drop(sync);
        record.holder = (!self.standalone.is_muted()).then(|| store.instance().to_owned());
        record.streams = lock(&self.streams)
            .iter()
            .map(|s| s.stream())
            .filter(|n| *n < LOCAL_STREAMS)
            .max()
            .unwrap_or(0);
        Some(record)
    }
}

/// `stored` with this copy's changes not recorded yet (from `saved` to `now`) on top.
fn merged(stored: &SessionState, saved: &SessionState, now: &SessionState) -> SessionState {
    let mut subscriptions: std::collections::BTreeSet<&String> =
        stored.subscriptions.iter().collect();
    for uri in &now.subscriptions {
        if saved.subscriptions.binary_search(uri).is_err() {
            subscriptions.insert(uri);
        }
    }
    for uri in &saved.subscriptions {
        if now.subscriptions.binary_search(uri).is_err() {
            subscriptions.remove(uri);
        }
    }
    let mut merged = SessionState::default();
    merged.initialized = stored.initialized || (now.initialized && !saved.initialized);
    merged.log_level = if now.log_level == saved.log_level {
        stored.log_level.clone()
    } else {
        now.log_level.clone()
    };
    merged.subscriptions = subscriptions.into_iter().cloned().collect();
    merged
}

/// Brings this copy to a stored state of revision `rev`, unless it has a more recent one;
/// changes made here and not recorded yet stay. Called with the copy's lock held.
fn apply_state(
    sh: &Endpoint,
    s: &HttpSession,
    sync: &mut Synced,
    state: SessionState,
    rev: u64,
) -> bool {
    if rev < sync.rev {
        return false;
    }
    let now = Server::session_state(&s.engine);
    let target = merged(&state, &sync.saved, &now);
    if target != now {
        sh.server.apply_session_state(&s.engine, &target);
    }
    sync.saved = state;
    sync.rev = rev;
    true
}

/// Brings this instance's copy of a session to the stored record (unless the copy knows
/// a more recent one), muting its stream 0 if another instance claimed it since this one
/// did.
pub(crate) fn apply_record(sh: &Endpoint, s: &HttpSession, record: StoredSession) {
    let me = sh.sessions.store().map(|st| st.instance().to_owned());
    let mut sync = lock(&s.sync);
    if !apply_state(sh, s, &mut sync, record.state, record.rev) {
        return;
    }
    sync.claims = sync.claims.max(record.claims);
    let other = record.holder.is_some() && record.holder != me;
    if other {
        sync.others = sync.others.max(record.claims);
    }
    // A record loaded before this instance's own claim says nothing about it.
    if other && record.claims > sync.claimed && !s.standalone.is_muted() {
        // The client reads its GET stream from another instance now.
        s.standalone.mute(true);
        s.standalone.detach();
    }
}

/// Re-creates a session the store lost from this copy (or takes the copy another
/// instance put back, if at least as recent). `Deleted` if it was deleted meanwhile: the
/// copy has ended then.
pub(crate) async fn restore(sh: &Endpoint, s: &HttpSession) -> Lookup<()> {
    let Some(store) = sh.sessions.store() else {
        return Lookup::Found(());
    };
    let Some(record) = s.full_record(store.as_ref()) else {
        return Lookup::Found(());
    };
    let outcome = match store.restore(&s.name, &record).await {
        Ok(Lookup::Found(())) => store.load(&s.name, false).await,
        Ok(Lookup::Deleted) => Ok(Lookup::Deleted),
        Ok(Lookup::Missing) => Ok(Lookup::Missing),
        Err(e) => Err(e),
    };
    match outcome {
        Ok(Lookup::Found(stored)) => {
            apply_record(sh, s, stored);
            Lookup::Found(())
        }
        Ok(Lookup::Deleted) => {
            tracing::debug!(session = %s.name, "session ended on another instance");
            sh.sessions.remove(&s.name);
            Lookup::Deleted
        }
        // Lost again at once: this copy serves on, and is put back at the next check.
        Ok(Lookup::Missing) => Lookup::Missing,
        Err(e) => {
            tracing::debug!(error = %e, "cannot re-create a session in the store");
            Lookup::Found(())
        }
    }
}

/// Records what the last request changed in the session (initialized, log level,
/// subscriptions) in the store, before the request is answered, so that the client's
/// next request sees it wherever it lands.
pub(crate) async fn persist(sh: &Endpoint, session: &HttpSession) {
    let Some(store) = sh.sessions.store() else {
        return;
    };
    let (before, now) = {
        let sync = lock(&session.sync);
        (sync.saved.clone(), Server::session_state(&session.engine))
    };
    if now == before {
        return;
    }
    match store.save(&session.name, &before, &now).await {
        Ok(Lookup::Found(Revision { state, rev, .. })) => {
            let mut sync = lock(&session.sync);
            apply_state(sh, session, &mut sync, state, rev);
        }
        Ok(Lookup::Deleted) => {
            tracing::debug!(session = %session.name, "session ended on another instance");
            sh.sessions.remove(&session.name);
        }
        // The store lost it: this copy, with the change, puts it back.
        Ok(Lookup::Missing) => {
            restore(sh, session).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot record a session change in the store: other instances do not see it yet");
        }
    }
}

/// Another instance changed session `name` (all sessions for `None`): reload the copies
/// this instance has. Reloads run one at a time, in the order asked, each copy's once
/// however often it was asked for; a copy never applies a record older than the one it
/// has.
pub(crate) fn reload(sh: &Arc<Endpoint>, name: Option<&str>) {
    if sh.sessions.store.is_none() || name.is_some_and(|n| sh.sessions.copies(Some(n)).is_empty()) {
        return;
    }
    let reloads = &sh.sessions.reloads;
    reloads.ask(name);
    if !reloads.started.swap(true, Ordering::AcqRel) {
        tokio::spawn(reloader(Arc::downgrade(sh), Arc::clone(reloads)));
    }
}

async fn reloader(sh: Weak<Endpoint>, reloads: Arc<Reloads>) {
    loop {
        tokio::select! {
            () = reloads.closed.cancelled() => return,
            () = reloads.asked.notified() => {}
        }
        let pending = reloads.take();
        let Some(sh) = sh.upgrade() else { return };
        let Some(store) = sh.sessions.store().cloned() else {
            return;
        };
        let copies: Vec<Arc<HttpSession>> = if pending.all {
            sh.sessions.copies(None)
        } else {
            pending
                .names
                .iter()
                .flat_map(|n| sh.sessions.copies(Some(n)))
                .collect()
        };
        let mut failed = false;
        for s in copies {
            match store.load(&s.name, false).await {
                Ok(Lookup::Found(record)) => apply_record(&sh, &s, record),
                Ok(Lookup::Deleted) => {
                    tracing::debug!(session = %s.name, "session ended on another instance");
                    sh.sessions.remove(&s.name);
                }
                // Lost by the store (not deleted): a copy still in use puts it back.
                Ok(Lookup::Missing) => {
                    if sh.sessions.fresh(&s) {
                        restore(&sh, &s).await;
                    } else {
                        sh.sessions.remove(&s.name);
                    }
                }
                // Redis not answering yet (or a connection that died with it): tried
                // again in a moment, not dropped.
                Err(e) => {
                    tracing::debug!(error = %e, "cannot reload a session: trying again");
                    reloads.ask(Some(&s.name));
                    failed = true;
                }
            }
        }
        drop(sh);
        if failed {
            tokio::select! {
                () = reloads.closed.cancelled() => return,
                () = tokio::time::sleep(RELOAD_RETRY) => {}
            }
        }
    }
}
