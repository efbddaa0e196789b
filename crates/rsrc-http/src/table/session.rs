//! One legacy session as this instance holds it: its engine session, stream 0 and its
//! POST streams kept for replay, its name, what it knows of its record in the store
//! ([`Synced`]), and whether it has ended.
//!
//! Invariants:
//! - A session id carries 192 random bits in visible ASCII; an id that could not be one
//!   of ours is never looked up.
//! - A session is known by its name, a keyed digest of its id and of the identity that
//!   created it ([`Sessions::names`](super::sessions::Sessions::names)): the id itself is kept
//!   nowhere, and another identity presenting it names another, absent, session.
//! - At most [`RETAINED_STREAMS`] finished POST streams are kept for replay, the oldest
//!   forgotten first; a running one is forgotten only when its stored log turns out
//!   broken.
//! - With a store, stream numbers come from the store (unique across instances); a stream
//!   it could not number is numbered here from [`LOCAL_STREAMS`] up, never shared.
//! - With a store, stream 0 starts muted: only the holder's copy takes notifications.
//! - Ending a session cancels its requests and closes every one of its streams.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use rsrc_protocol::ProtocolVersion;
use tokio_util::sync::CancellationToken;

use rsrc::Notifier;
use rsrc::server::Session;
use rsrc::sessions::{RETAINED_STREAMS, SessionState, SessionStore};

use crate::auth::Owner;
use crate::lock::lock;
use crate::sse::{LogLimits, Mirror, StreamLog};

/// Local stream numbers used when the store cannot number a stream (never shared).
pub(crate) const LOCAL_STREAMS: u64 = 1 << 48;

/// One legacy session.
pub(crate) struct HttpSession {
    /// Its name: in this instance's table, and in the store.
    pub(crate) name: Arc<str>,
    pub(crate) engine: Arc<Session>,
    /// Stream 0: notifications not tied to a request.
    pub(crate) standalone: Arc<StreamLog>,
    /// POST streams, oldest first.
    pub(crate) streams: Mutex<VecDeque<Arc<StreamLog>>>,
    next_stream: AtomicU64,
    pub(crate) last_used_ms: AtomicU64,
    /// Cancelled when the session ends.
    pub(crate) ended: CancellationToken,
    limits: LogLimits,
    /// Where new POST streams are mirrored (with a store).
    pub(crate) mirror: Option<Mirror>,
    /// What this copy knows of the store's record. Its lock also orders the decisions to
    /// mute or unmute stream 0.
    pub(crate) sync: Mutex<Synced>,
    /// When the store's copy was last touched, in [`Sessions`](super::sessions::Sessions)
    /// milliseconds.
    pub(crate) touched_ms: AtomicU64,
}

/// What a copy knows of the stored record.
#[derive(Debug, Default)]
pub(crate) struct Synced {
    /// The state last recorded in (or loaded from) the store.
    pub(crate) saved: SessionState,
    /// Its revision: an older record is not applied.
    pub(crate) rev: u64,
    /// The number of this instance's last claim of the GET stream (0: none).
    pub(crate) claimed: u64,
    /// The highest claim number seen in a record naming another holder.
    pub(crate) others: u64,
    /// The highest claim number seen.
    pub(crate) claims: u64,
}

impl std::fmt::Debug for HttpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSession")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A new session id: 192 random bits, base64url. Without an entropy source no session
/// can be made safe: the request is refused (an internal error), loudly.
pub(crate) fn fresh_id() -> Result<String, rsrc::keyring::NoRandomness> {
    let raw: [u8; 24] = rsrc::keyring::random_bytes()
        .inspect_err(|e| tracing::error!("no session can be created: {e}"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw))
}

/// Whether `id` could be one of ours (so that junk never reaches the store).
pub(crate) fn plausible_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The bytes of an identity, as session names cover it (empty without authentication).
pub(crate) fn owner_bytes(owner: Option<Owner>) -> Vec<u8> {
    owner.map(|o| o.bytes().to_vec()).unwrap_or_default()
}

impl HttpSession {
    pub(crate) fn new(
        name: Arc<str>,
        stop: &CancellationToken,
        limits: LogLimits,
        store: Option<&Arc<dyn SessionStore>>,
    ) -> Self {
        let mirror = store.map(|store| Mirror {
            store: Arc::clone(store),
            session: Arc::clone(&name),
        });
        let standalone = StreamLog::new(0, limits.clone(), mirror.clone());
        // With a store, only the holder's copy of stream 0 takes notifications.
        standalone.mute(mirror.is_some());
        let engine = Arc::new(
            Session::http(Notifier::sink(standalone.clone()), Arc::clone(&name))
                .closing_with(stop.clone()),
        );
        HttpSession {
            name,
            engine,
            standalone,
            streams: Mutex::new(VecDeque::new()),
            next_stream: AtomicU64::new(1),
            last_used_ms: AtomicU64::new(0),
            ended: CancellationToken::new(),
            limits,
            mirror,
            sync: Mutex::new(Synced::default()),
            touched_ms: AtomicU64::new(0),
        }
    }

    /// 2025-11-25 clients expect each stream to open with a primed event id.
    pub(crate) fn primes(&self) -> bool {
        self.engine
            .negotiated_version()
            .is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
    }

    pub(crate) fn busy(&self) -> bool {
        self.engine.in_flight() > 0 || self.standalone.is_attached()
    }

    /// A new POST stream, registered for replay: numbered by the store if there is one
    /// (numbers are then unique across instances), else here.
    pub(crate) async fn open_stream(&self) -> Arc<StreamLog> {
        let shared = match &self.mirror {
            Some(m) => match m.store.open_stream(&self.name).await {
                Ok(n) => Some(n),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot number a stream in the session store: it can be resumed on this instance only");
                    None
                }
            },
            None => None,
        };
        let log = match shared {
            Some(n) => StreamLog::new(n, self.limits.clone(), self.mirror.clone()),
            None => {
                let n = self.next_stream.fetch_add(1, Ordering::Relaxed);
                let n = if self.mirror.is_some() {
                    LOCAL_STREAMS + n
                } else {
                    n
                };
                StreamLog::new(n, self.limits.clone(), None)
            }
        };
        self.keep_stream(Arc::clone(&log));
        log
    }

    /// Registers a stream for replay, forgetting the oldest finished ones beyond
    /// [`RETAINED_STREAMS`].
    pub(crate) fn keep_stream(&self, log: Arc<StreamLog>) {
        let mut streams = lock(&self.streams);
        streams.push_back(log);
        // Forget the oldest finished streams beyond the retention bound.
        let mut finished = streams.iter().filter(|s| s.is_closed()).count();
        while finished > RETAINED_STREAMS {
            match streams.iter().position(|s| s.is_closed()) {
                Some(i) => {
                    streams.remove(i);
                    finished -= 1;
                }
                None => break,
            }
        }
    }

    /// Forgets a stream (its stored log turned out broken: a resumption asks again).
    pub(crate) fn forget_stream(&self, log: &Arc<StreamLog>) {
        lock(&self.streams).retain(|s| !Arc::ptr_eq(s, log));
    }

    pub(crate) fn stream(&self, n: u64) -> Option<Arc<StreamLog>> {
        if n == 0 {
            return Some(Arc::clone(&self.standalone));
        }
        lock(&self.streams)
            .iter()
            .find(|s| s.stream() == n)
            .cloned()
    }

    pub(crate) fn end(&self) {
        self.ended.cancel();
        self.engine.cancel_all();
        self.standalone.close();
        for s in lock(&self.streams).iter() {
            s.close();
        }
    }
}
