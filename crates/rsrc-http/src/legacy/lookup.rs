//! The session a 2025 request names (`Mcp-Session-Id`), as this instance holds it or, with
//! a session store, as it loads it from the store.
//!
//! Invariants:
//! - Another identity's session answers exactly like an unknown one: the id names
//!   another, absent, session.
//! - An id that could not be one of ours never reaches the store.
//! - With a store, a known copy is checked against it now and then, so that a DELETE or an
//!   expiry elsewhere ends it here too; a copy the store lost is put back from here.

use std::sync::Arc;

use axum::response::Response;
use http::{HeaderMap, StatusCode};
use rsrc::sessions::Lookup;
use rsrc_protocol::http::headers::SESSION_ID;
use rsrc_protocol::jsonrpc::ErrorCode;

use super::records::{reload, restore};
use super::refusals::{store_unavailable, too_many_sessions, unknown_session};
use crate::auth::Owner;
use crate::respond::rejection;
use crate::state::Endpoint;
use crate::table::{HttpSession, plausible_id};

/// The session the request names, if it exists and belongs to `owner`; another
/// identity's session answers exactly like an unknown one (its id names another,
/// absent, session). With a store, a session this instance has not seen yet is loaded
/// from it, and a known one is checked against it now and then (DELETE and expiry
/// elsewhere end it here too).
pub(crate) async fn session_of(
    sh: &Arc<Endpoint>,
    headers: &HeaderMap,
    owner: Option<Owner>,
) -> Result<Arc<HttpSession>, Response> {
    let Some(id) = headers.get(SESSION_ID) else {
        return Err(rejection(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "missing Mcp-Session-Id header: send initialize first",
        ));
    };
    let Some(id) = id.to_str().ok().filter(|id| plausible_id(id)) else {
        return Err(unknown_session());
    };
    let names = sh.sessions.names(id, owner);
    for name in &names {
        let Some(s) = sh.sessions.get(name) else {
            continue;
        };
        if let Some(store) = sh.sessions.store()
            && sh.sessions.touch_due(&s)
        {
            match store
                .touch(&[name.to_string()])
                .await
                .map(|f| f.into_iter().next())
            {
                Ok(Some(Lookup::Deleted)) => {
                    sh.sessions.remove(name);
                    return Err(unknown_session());
                }
                // The store lost it: this copy puts it back.
                Ok(Some(Lookup::Missing)) => {
                    if restore(sh, &s).await == Lookup::Deleted {
                        return Err(unknown_session());
                    }
                }
                Ok(_) => {}
                // Redis away: this instance's copy serves on.
                Err(e) => tracing::debug!(error = %e, "cannot check a session in the store"),
            }
        }
        return Ok(s);
    }
    let Some(store) = sh.sessions.store() else {
        return Err(unknown_session());
    };
    for name in names {
        // Evicted here: ended everywhere, even if the store has not heard yet.
        if sh.sessions.evicted(&name) {
            return Err(unknown_session());
        }
        let record = match store.load(&name, true).await {
            Ok(Lookup::Found(r)) => r,
            Ok(Lookup::Deleted) => return Err(unknown_session()),
            Ok(Lookup::Missing) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "cannot load a session from the store");
                return Err(store_unavailable("cannot load the session"));
            }
        };
        let Some(session) = HttpSession::restore(sh, Arc::clone(&name), &record) else {
            tracing::warn!("a stored session could not be read: treated as unknown");
            return Err(unknown_session());
        };
        let Some(session) = sh.sessions.insert(Arc::new(session)) else {
            return Err(too_many_sessions());
        };
        // A change announced between the load and the insertion found no copy here to
        // reload: reload once more (after any reload already queued).
        reload(sh, Some(&name));
        return Ok(session);
    }
    // Redis may have restarted empty: an instance with a copy is putting it back.
    if store.recovering() {
        return Err(store_unavailable("cannot load the session"));
    }
    Err(unknown_session())
}
