//! What the engine tells an operator: every metric it records (its name, kind, unit,
//! labels and meaning), and the trace context a request carries in (SEP-414).
//!
//! Metrics go through the `metrics` facade: the engine records, an application installs
//! a recorder (`rsrc serve --admin` installs the Prometheus one) before it builds the
//! server, since gauges are recorded as steps, or none, in which case the facade's no-op
//! recorder takes them. Names follow the OpenTelemetry semantic
//! conventions for MCP where they have one (`mcp_server_*`), and are rsrc's own
//! (`rsrc_*`) otherwise.
//!
//! Invariants:
//! - Every metric the engine records is named here, once, in [`CATALOGUE`]; recording
//!   sites use the constants, never a literal, so the catalogue (and the documentation
//!   checked against it) cannot drift from the code.
//! - Label values are bounded: methods the engine knows (any other is `_OTHER`),
//!   revisions, transports, error codes, mount prefixes, and the fixed words of each
//!   label below. A URI, session id, client name or path is never a label.
//! - The reasons of `rsrc_http_refusals_total` and `rsrc_listing_freshness_fallbacks_total`
//!   are listed here once ([`HTTP_REFUSAL_REASONS`], [`LISTING_FALLBACK_REASONS`]): their
//!   recording functions accept no other word (checked in debug builds), and
//!   [`describe`] registers each series at zero. The filesystem provider takes its
//!   fallback reasons' words from this list rather than writing its own.

use std::time::Duration;

use rsrc_protocol::jsonrpc::ErrorCode;

/// `mcp.server.operation.duration`: how long the server took to answer a request.
pub const OPERATION_DURATION: &str = "mcp_server_operation_duration_seconds";
/// `mcp.server.session.duration`: how long a 2025 session lasted.
pub const SESSION_DURATION: &str = "mcp_server_session_duration_seconds";
/// Cache lookups by cache (`read`: the read cache; `listing`: the directory listings of
/// the filesystem provider) and outcome (`hit`, `miss`, `join`).
pub const CACHE_LOOKUPS: &str = "rsrc_cache_lookups_total";
/// Cache entries evicted, by cache and cause (`size`, `expired`, `changed`).
pub const CACHE_EVICTIONS: &str = "rsrc_cache_evictions_total";
/// Times the filesystem provider's listings fell back from trusting the file watcher to
/// checking directory stamps, by reason ([`LISTING_FALLBACK_REASONS`]).
pub const LISTING_FALLBACKS: &str = "rsrc_listing_freshness_fallbacks_total";
/// Content bytes providers read, by mount.
pub const READ_BYTES: &str = "rsrc_read_bytes_total";
/// Bytes of messages written to clients, by transport.
pub const SENT_BYTES: &str = "rsrc_sent_bytes_total";
/// The budget of content in flight, in bytes.
pub const BUDGET_BYTES: &str = "rsrc_read_budget_bytes";
/// Bytes of that budget held now.
pub const BUDGET_IN_USE: &str = "rsrc_read_budget_in_use_bytes";
/// Reads waiting for room in the budget.
pub const BUDGET_WAITING: &str = "rsrc_read_budget_waiting";
/// Open 2025 sessions, by transport.
pub const SESSIONS_OPEN: &str = "rsrc_sessions_open";
/// Open `subscriptions/listen` streams.
pub const LISTEN_STREAMS_OPEN: &str = "rsrc_listen_streams_open";
/// Resources subscribed to, over every session and stream.
pub const SUBSCRIPTIONS_OPEN: &str = "rsrc_subscriptions_open";
/// Change notifications, by kind and outcome (`sent`, `coalesced`, `dropped`).
pub const NOTIFICATIONS: &str = "rsrc_notifications_total";
/// HTTP requests refused before the engine saw them, by reason.
pub const HTTP_REFUSALS: &str = "rsrc_http_refusals_total";
/// How long a provider took, by mount and operation.
pub const PROVIDER_DURATION: &str = "rsrc_provider_duration_seconds";
/// Provider calls that failed for a reason other than a missing resource, by mount and
/// operation.
pub const PROVIDER_ERRORS: &str = "rsrc_provider_errors_total";
/// Whether the change bus is connected (1) or not (0); absent without a bus.
pub const BUS_CONNECTED: &str = "rsrc_bus_connected";
/// Messages this instance published on the bus.
pub const BUS_PUBLISHED: &str = "rsrc_bus_messages_published_total";
/// Messages received from the bus and accepted.
pub const BUS_RECEIVED: &str = "rsrc_bus_messages_received_total";
/// Messages received from the bus and refused, by reason (`mac`, `malformed`).
pub const BUS_REFUSED: &str = "rsrc_bus_messages_refused_total";
/// Reconnections to the bus after it was lost.
pub const BUS_RECONNECTS: &str = "rsrc_bus_reconnects_total";
/// Leases this instance acquired or lost.
pub const BUS_LEASE_CHANGES: &str = "rsrc_bus_lease_changes_total";
/// Whether the instance is ready (1) or not (0).
pub const READY: &str = "rsrc_ready";
/// Whether the instance is draining (1) after a shutdown signal.
pub const DRAINING: &str = "rsrc_draining";
/// Whether a mount's change watcher is armed (1) or still starting (0).
pub const MOUNT_READY: &str = "rsrc_mount_ready";
/// Always 1, with the version as a label.
pub const BUILD_INFO: &str = "rsrc_build_info";

/// The kind of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up.
    Counter,
    /// Goes up and down.
    Gauge,
    /// A distribution of seconds.
    Histogram,
}

/// One metric: its name, kind, labels and meaning.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// The Prometheus name.
    pub name: &'static str,
    /// Counter, gauge or histogram.
    pub kind: Kind,
    /// Its labels (some present only on some series, e.g. `error_type`).
    pub labels: &'static [&'static str],
    /// What it means.
    pub help: &'static str,
}

const fn m(
    name: &'static str,
    kind: Kind,
    labels: &'static [&'static str],
    help: &'static str,
) -> Metric {
    Metric {
        name,
        kind,
        labels,
        help,
    }
}

/// Every metric the engine and `rsrc serve` record.
pub const CATALOGUE: &[Metric] = &[
    m(
        OPERATION_DURATION,
        Kind::Histogram,
        &[
            "mcp_method_name",
            "mcp_protocol_version",
            "network_transport",
            "error_type",
        ],
        "Time to answer an MCP request, from decoding to the reply",
    ),
    m(
        SESSION_DURATION,
        Kind::Histogram,
        &["mcp_protocol_version", "network_transport"],
        "Lifetime of a 2025 session, from initialize to its end",
    ),
    m(
        CACHE_LOOKUPS,
        Kind::Counter,
        &["cache", "outcome"],
        "Cache lookups: hit, miss, or join (waited for the same read in flight)",
    ),
    m(
        CACHE_EVICTIONS,
        Kind::Counter,
        &["cache", "cause"],
        "Cache entries removed: size (room), expired (time to live), changed (the resource changed)",
    ),
    m(
        LISTING_FALLBACKS,
        Kind::Counter,
        &["reason"],
        "Times the filesystem provider's listings fell back from trusting the file watcher to checking directory stamps",
    ),
    m(
        READ_BYTES,
        Kind::Counter,
        &["mount"],
        "Content bytes providers returned for reads",
    ),
    m(
        SENT_BYTES,
        Kind::Counter,
        &["network_transport"],
        "Bytes of messages written to clients",
    ),
    m(
        BUDGET_BYTES,
        Kind::Gauge,
        &[],
        "The budget of content in flight",
    ),
    m(
        BUDGET_IN_USE,
        Kind::Gauge,
        &[],
        "Bytes of the budget of content in flight held now",
    ),
    m(
        BUDGET_WAITING,
        Kind::Gauge,
        &[],
        "Reads waiting for room in the budget of content in flight",
    ),
    m(
        SESSIONS_OPEN,
        Kind::Gauge,
        &["network_transport"],
        "Open 2025 sessions",
    ),
    m(
        LISTEN_STREAMS_OPEN,
        Kind::Gauge,
        &[],
        "Open subscriptions/listen streams",
    ),
    m(
        SUBSCRIPTIONS_OPEN,
        Kind::Gauge,
        &[],
        "Resources subscribed to, over every session and listen stream",
    ),
    m(
        NOTIFICATIONS,
        Kind::Counter,
        &["kind", "outcome"],
        "Change notifications: sent, coalesced with one still queued, or dropped",
    ),
    m(
        HTTP_REFUSALS,
        Kind::Counter,
        &["reason"],
        "HTTP requests refused before reaching the engine",
    ),
    m(
        PROVIDER_DURATION,
        Kind::Histogram,
        &["mount", "operation"],
        "Time a provider took for one call",
    ),
    m(
        PROVIDER_ERRORS,
        Kind::Counter,
        &["mount", "operation"],
        "Provider calls that failed other than with not-found",
    ),
    m(
        BUS_CONNECTED,
        Kind::Gauge,
        &[],
        "Whether the change bus is connected",
    ),
    m(
        BUS_PUBLISHED,
        Kind::Counter,
        &[],
        "Messages published on the change bus",
    ),
    m(
        BUS_RECEIVED,
        Kind::Counter,
        &[],
        "Messages received from the change bus and accepted",
    ),
    m(
        BUS_REFUSED,
        Kind::Counter,
        &["reason"],
        "Messages received from the change bus and refused",
    ),
    m(
        BUS_RECONNECTS,
        Kind::Counter,
        &[],
        "Reconnections to the change bus",
    ),
    m(
        BUS_LEASE_CHANGES,
        Kind::Counter,
        &["change"],
        "Watch leases acquired or lost",
    ),
    m(READY, Kind::Gauge, &[], "Whether the instance is ready"),
    m(
        DRAINING,
        Kind::Gauge,
        &[],
        "Whether the instance is draining after a shutdown signal",
    ),
    m(
        MOUNT_READY,
        Kind::Gauge,
        &["mount"],
        "Whether a mount's change watcher is armed",
    ),
    m(
        BUILD_INFO,
        Kind::Gauge,
        &["version"],
        "Always 1; the version is a label",
    ),
];

/// The reasons of `rsrc_http_refusals_total`.
pub const HTTP_REFUSAL_REASONS: &[&str] = &[
    "header",
    "host",
    "origin",
    "auth",
    "content_type",
    "accept",
    "body_size",
    "body_timeout",
    "rate",
    "stream_cap",
    "session_cap",
    "session_store",
    "session_unknown",
    "header_mismatch",
];

/// The reasons of `rsrc_listing_freshness_fallbacks_total`, the one list of them: the
/// filesystem provider's `FreshnessFallback` labels each of its reasons with the word at
/// the reason's position here (its name in snake case). `overflow`: the kernel's event
/// queue overflowed; `error`: reading events failed; `watch_limit`: the watch table is
/// full (`fs.inotify.max_user_watches`); `unwatchable`: a directory or root cannot be
/// watched; `no_events`: a filesystem whose changes raise no event here (NFS, SMB, FUSE,
/// …); `rebuild`: a root's watches are rebuilt (a watched directory moved, an ignore file
/// changed).
pub const LISTING_FALLBACK_REASONS: &[&str] = &[
    "overflow",
    "error",
    "watch_limit",
    "unwatchable",
    "no_events",
    "rebuild",
];

/// Describes every metric of [`CATALOGUE`] to the installed recorder (help texts and
/// units), so they appear with their `# HELP` lines, and registers the counters whose
/// labels take fixed values at zero, so that a rate over their first rise is seen.
pub fn describe() {
    for metric in CATALOGUE {
        let help = metric.help;
        match metric.kind {
            Kind::Counter => metrics::describe_counter!(metric.name, help),
            Kind::Gauge => metrics::describe_gauge!(metric.name, help),
            Kind::Histogram => {
                metrics::describe_histogram!(metric.name, metrics::Unit::Seconds, help);
            }
        }
    }
    for &(cache, outcome) in CACHE_LOOKUP_SERIES {
        metrics::counter!(CACHE_LOOKUPS, "cache" => cache, "outcome" => outcome).absolute(0);
    }
    for kind in ["resource_updated", "list_changed"] {
        for outcome in ["sent", "coalesced", "dropped"] {
            metrics::counter!(NOTIFICATIONS, "kind" => kind, "outcome" => outcome).absolute(0);
        }
    }
    for reason in HTTP_REFUSAL_REASONS {
        metrics::counter!(HTTP_REFUSALS, "reason" => *reason).absolute(0);
    }
    for reason in LISTING_FALLBACK_REASONS {
        metrics::counter!(LISTING_FALLBACKS, "reason" => *reason).absolute(0);
    }
}

/// The buckets of the duration histograms, in seconds: from 100 µs (a cached read over
/// stdio) to 5 minutes (a long listing), those of the MCP semantic conventions with finer
/// ones below 10 ms.
pub const DURATION_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0,
    10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The `network.transport` of a carrier: `pipe` for stdio and other byte streams, `tcp`
/// for HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Stdio and other byte streams.
    Pipe,
    /// HTTP.
    Tcp,
}

impl Transport {
    /// The attribute's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// The series of `mcp_server_operation_duration_seconds`, by their labels.
type OperationKey = (
    metrics::SharedString,
    &'static str,
    Transport,
    Option<&'static str>,
);

/// Each series' histogram, registered the first time it is recorded: a request then
/// records through a shared lookup, without building a key. The labels are bounded (see
/// the module's invariants), so the table is.
static OPERATIONS: std::sync::LazyLock<
    std::sync::RwLock<std::collections::HashMap<OperationKey, metrics::Histogram>>,
> = std::sync::LazyLock::new(Default::default);

/// Counts bytes written to a client over `transport` (`rsrc_sent_bytes_total`), through
/// a handle registered once.
pub fn sent(transport: Transport, bytes: usize) {
    static PIPE: std::sync::OnceLock<metrics::Counter> = std::sync::OnceLock::new();
    static TCP: std::sync::OnceLock<metrics::Counter> = std::sync::OnceLock::new();
    let counter = match transport {
        Transport::Pipe => {
            PIPE.get_or_init(|| metrics::counter!(SENT_BYTES, "network_transport" => "pipe"))
        }
        Transport::Tcp => {
            TCP.get_or_init(|| metrics::counter!(SENT_BYTES, "network_transport" => "tcp"))
        }
    };
    counter.increment(bytes as u64);
}

/// Records one finished request: `error` is the `error_type` of a failure, `None` for a
/// result.
pub(crate) fn operation(
    method: metrics::SharedString,
    version: &'static str,
    transport: Transport,
    error: Option<&'static str>,
    took: Duration,
) {
    let key = (method, version, transport, error);
    let known = OPERATIONS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
        .cloned();
    let histogram = known.unwrap_or_else(|| {
        let (method, version, transport, error) = key.clone();
        let histogram = match error {
            None => metrics::histogram!(
                OPERATION_DURATION,
                "mcp_method_name" => method,
                "mcp_protocol_version" => version,
                "network_transport" => transport.as_str(),
            ),
            Some(error) => metrics::histogram!(
                OPERATION_DURATION,
                "mcp_method_name" => method,
                "mcp_protocol_version" => version,
                "network_transport" => transport.as_str(),
                "error_type" => error,
            ),
        };
        OPERATIONS
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, histogram.clone());
        histogram
    });
    histogram.record(took.as_secs_f64());
}

/// The `error_type` of a JSON-RPC error code: the codes of the protocol, as text
/// (bounded: any other, an application's own, is `_OTHER`).
pub(crate) fn error_type(code: ErrorCode) -> &'static str {
    const KNOWN: [(ErrorCode, &str); 9] = [
        (ErrorCode::PARSE_ERROR, "-32700"),
        (ErrorCode::INVALID_REQUEST, "-32600"),
        (ErrorCode::METHOD_NOT_FOUND, "-32601"),
        (ErrorCode::INVALID_PARAMS, "-32602"),
        (ErrorCode::INTERNAL_ERROR, "-32603"),
        (ErrorCode::RESOURCE_NOT_FOUND, "-32002"),
        (ErrorCode::HEADER_MISMATCH, "-32020"),
        (ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "-32021"),
        (ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "-32022"),
    ];
    KNOWN
        .iter()
        .find(|(known, _)| *known == code)
        .map_or("_OTHER", |(_, text)| text)
}

/// What a provider call does, for its mount's instruments.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ProviderOp {
    Read,
    List,
    Metadata,
    Complete,
    Search,
}

impl ProviderOp {
    const ALL: [ProviderOp; 5] = [
        ProviderOp::Read,
        ProviderOp::List,
        ProviderOp::Metadata,
        ProviderOp::Complete,
        ProviderOp::Search,
    ];

    /// The `operation` label.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ProviderOp::Read => "read",
            ProviderOp::List => "list",
            ProviderOp::Metadata => "metadata",
            ProviderOp::Complete => "complete",
            ProviderOp::Search => "search",
        }
    }
}

/// A mount's instruments, registered once when it is mounted (with the recorder
/// installed then), so that a provider call records without building a key.
pub(crate) struct MountMetrics {
    durations: [metrics::Histogram; 5],
    errors: [metrics::Counter; 5],
    read_bytes: metrics::Counter,
}

impl MountMetrics {
    pub(crate) fn new(mount: &str) -> MountMetrics {
        let mount = metrics::SharedString::from(mount.to_owned());
        let labels = |op: ProviderOp| {
            [
                metrics::Label::new("mount", mount.clone()),
                metrics::Label::new("operation", op.as_str()),
            ]
        };
        MountMetrics {
            durations: ProviderOp::ALL
                .map(|op| metrics::histogram!(PROVIDER_DURATION, labels(op).iter())),
            errors: ProviderOp::ALL.map(|op| metrics::counter!(PROVIDER_ERRORS, labels(op).iter())),
            read_bytes: metrics::counter!(READ_BYTES, "mount" => mount.clone()),
        }
    }

    /// Records one call of `op`: its time, and whether it failed for a reason of the
    /// source's.
    pub(crate) fn call(&self, op: ProviderOp, took: Duration, failed: bool) {
        self.durations[op as usize].record(took.as_secs_f64());
        if failed {
            self.errors[op as usize].increment(1);
        }
    }

    /// Counts content bytes a read returned.
    pub(crate) fn read(&self, bytes: u64) {
        self.read_bytes.increment(bytes);
    }
}

/// A client's text (a request id, say) for a span attribute or a log field: cut at 128
/// bytes (with `…`), so what a client chose never costs more than that there.
pub(crate) struct Capped<T>(pub(crate) T);

impl<T: std::fmt::Display> std::fmt::Display for Capped<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const MAX: usize = 128;
        let text = self.0.to_string();
        if text.len() <= MAX {
            return f.write_str(&text);
        }
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        write!(f, "{}…", &text[..end])
    }
}

/// Counts one lookup of `cache` (`read`, `listing`): `hit`, `miss`, or `join` (it waited
/// for a lookup in flight that loaded it). Its labels are literals, so counting builds no
/// key.
pub fn cache_lookup(cache: &'static str, outcome: &'static str) {
    macro_rules! series {
        ($($cache:literal, $outcome:literal);*) => {
            match (cache, outcome) {
                $(($cache, $outcome) => {
                    metrics::counter!(CACHE_LOOKUPS, "cache" => $cache, "outcome" => $outcome)
                        .increment(1);
                })*
                (cache, outcome) => debug_assert!(false, "cache {cache}, outcome {outcome}"),
            }
        };
    }
    cache_lookup_series!(series);
}

/// The series of `rsrc_cache_lookups_total`, written once: `macro!(cache, outcome; …)`.
macro_rules! cache_lookup_series {
    ($then:ident) => {
        $then!("read", "hit"; "read", "miss"; "read", "join"; "listing", "hit"; "listing", "miss")
    };
}
use cache_lookup_series;

/// Every series of `rsrc_cache_lookups_total`, for their registration at zero.
const CACHE_LOOKUP_SERIES: &[(&str, &str)] = {
    macro_rules! pairs {
        ($($cache:literal, $outcome:literal);*) => { &[$(($cache, $outcome)),*] };
    }
    cache_lookup_series!(pairs)
};

/// Counts one entry of `cache` evicted: for room (`size`), its time to live
/// (`expired`), or a change of what it holds (`changed`).
pub fn cache_eviction(cache: &'static str, cause: &'static str) {
    metrics::counter!(CACHE_EVICTIONS, "cache" => cache, "cause" => cause).increment(1);
}

/// Counts an HTTP request refused before the engine saw it (`rsrc_http_refusals_total`):
/// `reason` is one of a fixed set of words (`host`, `origin`, `auth`, `body_size`, …).
pub fn http_refusal(reason: &'static str) {
    debug_assert!(HTTP_REFUSAL_REASONS.contains(&reason), "{reason}");
    metrics::counter!(HTTP_REFUSALS, "reason" => reason).increment(1);
}

/// Counts one fallback of the filesystem provider's listings from the file watcher's word
/// to directory stamps (`rsrc_listing_freshness_fallbacks_total`): `reason` is one of
/// [`LISTING_FALLBACK_REASONS`]. Called from the one place the provider counts its
/// fallbacks, so its own count and this one agree.
pub fn listing_fallback(reason: &'static str) {
    debug_assert!(LISTING_FALLBACK_REASONS.contains(&reason), "{reason}");
    metrics::counter!(LISTING_FALLBACKS, "reason" => reason).increment(1);
}

/// The target of a request's SERVER span when its trace is sampled.
pub const REQUEST_TARGET: &str = "rsrc::request";
/// The target of a request's span when its trace is not sampled
/// ([`RequestTracing::sampled`] said no): the span is still there for logs, with the
/// same fields, and a tracing layer that exports spans leaves it (and whatever opens
/// under it) alone.
pub const UNSAMPLED_TARGET: &str = "rsrc::request::unsampled";

/// A span that continues the trace of the one around it (a cache lookup, a provider
/// call, a statement), made by `make` only inside a span: a request that no subscriber
/// keeps (neither sampled nor logged) then opens none, and work outside any request (a
/// poller's, the bus's) is not traced.
pub fn child_span(make: impl FnOnce() -> tracing::Span) -> tracing::Span {
    if tracing::Span::current().is_none() {
        tracing::Span::none()
    } else {
        make()
    }
}

/// The trace context a request carries (SEP-414: `traceparent`, `tracestate` and
/// `baggage` in `params._meta`, unprefixed; over HTTP the `traceparent` and `tracestate`
/// headers when `_meta` has none). The engine only passes these on, to the
/// [`RequestTracing`] an application set with
/// [`ServerBuilder::request_tracing`](crate::server::ServerBuilder::request_tracing); it
/// believes nothing in them.
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceCarrier<'a> {
    /// The W3C `traceparent`.
    pub traceparent: Option<&'a str>,
    /// The W3C `tracestate`.
    pub tracestate: Option<&'a str>,
    /// The W3C `baggage`.
    pub baggage: Option<&'a str>,
}

impl TraceCarrier<'_> {
    /// Whether it carries nothing.
    pub fn is_empty(&self) -> bool {
        self.traceparent.is_none() && self.tracestate.is_none() && self.baggage.is_none()
    }
}

/// An application's part in tracing requests. For each request that runs, the engine
/// asks [`sampled`](Self::sampled) before its span exists, makes the span (target
/// [`REQUEST_TARGET`], or [`UNSAMPLED_TARGET`] when not sampled; disabled when no
/// subscriber wants it), and then hands it to [`adopt`](Self::adopt), on the same thread.
///
/// Deciding first is what makes an unsampled request cheap: a layer exporting spans
/// filters out [`UNSAMPLED_TARGET`] statically, so when no log keeps the span either it
/// is never made, and neither are the engine's other spans ([`child_span`]); when a log
/// does keep it, the exporting layer leaves alone whatever opens under it.
pub trait RequestTracing: Send + Sync {
    /// Whether the request's trace is sampled, given the context its client carried.
    fn sampled(&self, carrier: TraceCarrier<'_>) -> bool;
    /// Makes `span` a child of the trace the client carried (with `tracing-opentelemetry`,
    /// `OpenTelemetrySpanExt::set_parent`) and records its `trace_id` field; `sampled` is
    /// what [`sampled`](Self::sampled) answered.
    fn adopt(&self, span: &tracing::Span, carrier: TraceCarrier<'_>, sampled: bool);
}

#[cfg(test)]
mod tests;
