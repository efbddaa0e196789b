//! A read cache: results of `resources/read` kept per URI for a time to live, shared by
//! every client of the server.
//!
//! [`ReadCache`] is the one implementation; [`Cached`] wraps any [`Provider`] with it, and
//! a [`ResourceSet`](crate::ResourceSet) uses it for the resources declared with a cache
//! policy (`cache = "300s"` in the `#[resources]` macro).
//!
//! Invariants:
//! - Memory is bounded: at most [`CacheLimits::max_bytes`] of content and
//!   [`CacheLimits::max_entries`] entries (each entry weighs at least
//!   `max_bytes / max_entries`, so the one byte bound enforces both); an entry larger than
//!   an eighth of the budget is never stored.
//! - Single flight: concurrent reads of a URI that is not cached wait for one backend
//!   call and share its result, errors included; errors are never stored. If the reader
//!   running the call is cancelled or panics, a waiting reader makes the call instead.
//! - A change published for a URI ([`ChangeFeed::updated`]) drops its entry before any
//!   subscriber hears of the change, and a read that was in flight when the change came
//!   is not stored, so a client that reads after a notification never gets what the
//!   notification replaced.
//! - A result carries the time it has left to live as its caching hint (`ttlMs`, and the
//!   policy's `cacheScope`, on 2026-07-28 results).
//!
//! The cache is shared by every session: content that differs per user must not be
//! cached here.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The clock of the time to live: tokio's, which a paused test runtime drives (and the
/// system's outside a runtime).
use tokio::time::Instant as TtlClock;

use rsrc_protocol::{
    CacheHint, CacheScope, Completion, Resource, ResourceContents, ResourceTemplate,
};
use tokio::sync::OnceCell;
use tracing::Instrument as _;

use crate::changes::{ChangeEvent, ChangeFeed};
use crate::context::RequestContext;
use crate::error::ResourceError;
use crate::provider::{
    CompleteRequest, ListRequest, Page, Provider, ProviderCapabilities, ReadOutput,
};

/// How long a read stays cached, and who clients may share it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    /// How long a result is served from the cache.
    pub ttl: Duration,
    /// The `cacheScope` of cached results (default private).
    pub scope: CacheScope,
}

impl CachePolicy {
    /// Cached for `ttl`, private.
    pub fn new(ttl: Duration) -> Self {
        CachePolicy {
            ttl,
            scope: CacheScope::Private,
        }
    }

    /// Sets the scope clients are told.
    #[must_use]
    pub fn with_scope(mut self, scope: CacheScope) -> Self {
        self.scope = scope;
        self
    }

    fn hint(self, left: Duration) -> CacheHint {
        CacheHint::new(
            u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
            self.scope,
        )
    }
}

/// The bounds of a [`ReadCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// Most entries (default 10,000).
    pub max_entries: u64,
    /// Most bytes of content and metadata (default 64 MiB).
    pub max_bytes: u64,
}

impl Default for CacheLimits {
    fn default() -> Self {
        CacheLimits {
            max_entries: 10_000,
            max_bytes: 64 << 20,
        }
    }
}

struct Stored {
    output: ReadOutput,
    policy: CachePolicy,
    /// When it was stored, on the time to live's clock.
    stored_at: TtlClock,
    weight: u32,
}

/// One backend call that concurrent readers of a URI share.
#[derive(Default)]
struct Flight {
    result: OnceCell<Result<ReadOutput, ResourceError>>,
    /// Set when the URI changed while the call was running: its result is not stored.
    stale: AtomicBool,
}

struct CacheState {
    store: moka::sync::Cache<String, Arc<Stored>>,
    flights: Mutex<HashMap<String, Arc<Flight>>>,
    min_weight: u64,
    max_entry_bytes: u64,
}

/// Cached reads by URI, bounded, single-flight, dropped on change. Cheap to clone (clones
/// share the entries).
#[derive(Clone)]
pub struct ReadCache {
    state: Arc<CacheState>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache")
            .field("entries", &self.state.store.entry_count())
            .finish_non_exhaustive()
    }
}

impl Default for ReadCache {
    fn default() -> Self {
        ReadCache::new(CacheLimits::default())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts one lookup: `hit`, `miss` (this reader loaded it) or `join` (it waited for a
/// reader that did).
fn lookup(span: &tracing::Span, outcome: &'static str) {
    span.record("rsrc.cache.outcome", outcome);
    crate::observe::cache_lookup("read", outcome);
}

/// What an output costs to keep: its payloads and the text of its metadata.
fn bytes_of(uri: &str, output: &ReadOutput) -> u64 {
    let resource = |r: &Resource| {
        r.uri.len()
            + r.name.len()
            + r.title.as_ref().map_or(0, String::len)
            + r.description.as_ref().map_or(0, String::len)
            + r.mime_type.as_ref().map_or(0, String::len)
            + std::mem::size_of::<ResourceContents>()
    };
    let contents: usize = output
        .contents
        .iter()
        .map(|c| c.body.len() + resource(&c.resource))
        .sum();
    (uri.len() + contents) as u64
}

/// Per-entry time to live: each entry keeps the policy it was stored with.
struct PerEntryTtl;

impl moka::Expiry<String, Arc<Stored>> for PerEntryTtl {
    fn expire_after_create(
        &self,
        _key: &String,
        value: &Arc<Stored>,
        _created_at: Instant,
    ) -> Option<Duration> {
        Some(value.policy.ttl)
    }
}

/// Removes a flight from the table when its last reader is done with it, so that the
/// table only ever holds calls someone is waiting for.
struct FlightGuard<'a> {
    state: &'a CacheState,
    uri: &'a str,
    flight: Arc<Flight>,
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        let mut flights = lock(&self.state.flights);
        let ours = flights
            .get(self.uri)
            .is_some_and(|f| Arc::ptr_eq(f, &self.flight));
        // Done, or nobody else is waiting (the table's reference and ours).
        if ours && (self.flight.result.initialized() || Arc::strong_count(&self.flight) <= 2) {
            flights.remove(self.uri);
        }
    }
}

impl ReadCache {
    /// An empty cache within `limits`.
    pub fn new(limits: CacheLimits) -> Self {
        let max_bytes = limits.max_bytes.max(1);
        let min_weight = (max_bytes / limits.max_entries.max(1)).max(1);
        let store = moka::sync::Cache::builder()
            .max_capacity(max_bytes)
            .weigher(|_: &String, v: &Arc<Stored>| v.weight)
            .expire_after(PerEntryTtl)
            .eviction_listener(|_, _, cause| {
                let cause = match cause {
                    moka::notification::RemovalCause::Size => "size",
                    moka::notification::RemovalCause::Expired => "expired",
                    moka::notification::RemovalCause::Explicit => "changed",
                    // A newer read of the same URI took its place: nothing left.
                    moka::notification::RemovalCause::Replaced => return,
                };
                crate::observe::cache_eviction("read", cause);
            })
            .build();
        ReadCache {
            state: Arc::new(CacheState {
                store,
                flights: Mutex::new(HashMap::new()),
                min_weight,
                max_entry_bytes: max_bytes / 8,
            }),
        }
    }

    /// Drops the entries of URIs that `feed` reports changed (and every entry when the
    /// set of resources changed). A [`Provider`] using the cache calls it from
    /// [`Provider::attach`].
    pub fn follow(&self, feed: &ChangeFeed) {
        let state = Arc::downgrade(&self.state);
        feed.on_change(move |event| {
            if let Some(state) = state.upgrade() {
                let cache = ReadCache { state };
                match event {
                    ChangeEvent::Updated(uri) => cache.invalidate(uri),
                    // Rare (a watcher taking over, a bus back from a disconnection).
                    ChangeEvent::Resync(_) => cache.invalidate_all(),
                    _ => {}
                }
            }
        });
    }

    /// Drops the entry of `uri`; a read of it in flight will not be stored.
    pub fn invalidate(&self, uri: &str) {
        self.state.store.invalidate(uri);
        if let Some(flight) = lock(&self.state.flights).remove(uri) {
            flight.stale.store(true, Ordering::Release);
        }
    }

    /// Drops every entry.
    pub fn invalidate_all(&self) {
        self.state.store.invalidate_all();
        for (_, flight) in lock(&self.state.flights).drain() {
            flight.stale.store(true, Ordering::Release);
        }
    }

    /// How many entries are stored (approximately: expired entries may still count).
    pub fn entry_count(&self) -> u64 {
        self.state.store.run_pending_tasks();
        self.state.store.entry_count()
    }

    /// The cached read of `uri`, or the result of `load` (made once for every concurrent
    /// reader of `uri`), stored for `policy.ttl` if it succeeded.
    pub async fn read<F, Fut>(
        &self,
        uri: &str,
        policy: CachePolicy,
        load: F,
    ) -> Result<ReadOutput, ResourceError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<ReadOutput, ResourceError>>,
    {
        let span = crate::observe::child_span(|| {
            tracing::info_span!(
                target: "rsrc::cache",
                "cache",
                rsrc.cache.outcome = tracing::field::Empty,
            )
        });
        if let Some(hit) = self.hit(uri) {
            lookup(&span, "hit");
            return Ok(hit);
        }
        let flight = Arc::clone(lock(&self.state.flights).entry(uri.to_owned()).or_default());
        let guard = FlightGuard {
            state: &self.state,
            uri,
            flight,
        };
        let flight = &guard.flight;
        let mut outcome = "join";
        let result = flight
            .result
            .get_or_init(|| async {
                // A flight that ended just before this one began may have stored it.
                if let Some(hit) = self.hit(uri) {
                    outcome = "hit";
                    return Ok(hit);
                }
                outcome = "miss";
                let loaded = load().await;
                if let Ok(output) = &loaded
                    && !flight.stale.load(Ordering::Acquire)
                {
                    self.store(uri, output, policy);
                }
                loaded.map(|mut output| {
                    output.cache = Some(policy.hint(policy.ttl));
                    output
                })
            })
            .instrument(span.clone())
            .await
            .clone();
        drop(guard);
        lookup(&span, outcome);
        result
    }

    /// The cached read of `uri`, if there is one still fresh.
    pub fn hit(&self, uri: &str) -> Option<ReadOutput> {
        let stored = self.state.store.get(uri)?;
        // The store's own expiry (moka's clock) only frees memory; freshness is this.
        let left = (stored.policy.ttl.checked_sub(stored.stored_at.elapsed()))
            .filter(|left| !left.is_zero())?;
        Some(ReadOutput {
            contents: stored.output.contents.clone(),
            cache: Some(stored.policy.hint(left)),
        })
    }

    fn store(&self, uri: &str, output: &ReadOutput, policy: CachePolicy) {
        if policy.ttl.is_zero() {
            return;
        }
        let bytes = bytes_of(uri, output);
        if bytes > self.state.max_entry_bytes {
            return;
        }
        let weight = u32::try_from(bytes.max(self.state.min_weight)).unwrap_or(u32::MAX);
        self.state.store.insert(
            uri.to_owned(),
            Arc::new(Stored {
                output: ReadOutput {
                    contents: output.contents.clone(),
                    cache: None,
                },
                policy,
                stored_at: TtlClock::now(),
                weight,
            }),
        );
    }
}

/// Any [`Provider`] with its reads cached: every `resources/read` goes through a
/// [`ReadCache`]; listing, metadata, completion and subscriptions go straight to the
/// provider.
///
/// ```
/// use std::time::Duration;
/// use rsrc::{Cached, ResourceSet, Server};
///
/// let set = ResourceSet::new();
/// let server = Server::builder("s", "1")
///     .mount("notes:", Cached::new(set, Duration::from_secs(300)))
///     .build()
///     .unwrap();
/// # drop(server);
/// ```
#[derive(Debug)]
pub struct Cached<P> {
    provider: P,
    cache: ReadCache,
    policy: CachePolicy,
}

impl<P: Provider> Cached<P> {
    /// Caches the reads of `provider` for `ttl`, privately, within the default limits.
    pub fn new(provider: P, ttl: Duration) -> Self {
        Cached {
            provider,
            cache: ReadCache::default(),
            policy: CachePolicy::new(ttl),
        }
    }

    /// Sets the scope clients are told.
    #[must_use]
    pub fn with_scope(mut self, scope: CacheScope) -> Self {
        self.policy.scope = scope;
        self
    }

    /// Replaces the cache (to set its limits, or to share one between providers).
    #[must_use]
    pub fn with_cache(mut self, cache: ReadCache) -> Self {
        self.cache = cache;
        self
    }

    /// The cache.
    pub fn cache(&self) -> &ReadCache {
        &self.cache
    }
}

impl<P: Provider> Provider for Cached<P> {
    fn templates(&self) -> Vec<ResourceTemplate> {
        self.provider.templates()
    }

    fn fixed_uris(&self) -> Vec<String> {
        self.provider.fixed_uris()
    }

    fn capabilities(&self) -> ProviderCapabilities {
        self.provider.capabilities()
    }

    fn attach(&self, feed: ChangeFeed) {
        self.cache.follow(&feed);
        self.provider.attach(feed);
    }

    fn hears_every_change(&self) -> bool {
        self.provider.hears_every_change()
    }

    fn armed(&self) -> bool {
        self.provider.armed()
    }

    async fn list(
        &self,
        ctx: &RequestContext,
        req: ListRequest<'_>,
    ) -> Result<Page, ResourceError> {
        self.provider.list(ctx, req).await
    }

    async fn metadata(&self, ctx: &RequestContext, uri: &str) -> Result<Resource, ResourceError> {
        self.provider.metadata(ctx, uri).await
    }

    async fn read(&self, ctx: &RequestContext, uri: &str) -> Result<ReadOutput, ResourceError> {
        self.cache
            .read(uri, self.policy, || self.provider.read(ctx, uri))
            .await
    }

    async fn complete(
        &self,
        ctx: &RequestContext,
        req: CompleteRequest<'_>,
    ) -> Result<Completion, ResourceError> {
        self.provider.complete(ctx, req).await
    }

    async fn search(
        &self,
        ctx: &RequestContext,
        req: crate::provider::SearchRequest<'_>,
    ) -> Result<Option<Page>, ResourceError> {
        self.provider.search(ctx, req).await
    }

    async fn subscribe(&self, ctx: &RequestContext, uri: &str) -> Result<(), ResourceError> {
        self.provider.subscribe(ctx, uri).await
    }
}
