//! What the `rsrc` command tells about itself: its log lines (text, or one JSON object a
//! line) and, when configured, its OpenTelemetry traces, exported over OTLP/HTTP.
//!
//! Invariants:
//! - Logs go to stderr only (stdout carries protocol messages or the requested output).
//! - Tracing is off unless an endpoint is configured; when on, spans are exported from a
//!   thread of the SDK's own through a bounded queue, so a slow or unreachable collector
//!   never slows, blocks or fails a request (spans beyond the queue are dropped).
//! - A trace context received from outside (a client's `_meta`, an HTTP header) is only
//!   ever parsed by the W3C propagator; a malformed one starts a new trace.
//! - Nothing secret enters a span: the engine's spans carry methods, ids, URIs and
//!   error codes, never tokens or contents.

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, IdGenerator, RandomIdGenerator, Sampler,
    SdkTracerProvider,
};
use rsrc::observe::{RequestTracing, TraceCarrier};
use serde::{Deserialize, Serialize};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object a line, with the fields of the request being served (method,
    /// id, session, trace id).
    Json,
}

/// `[tracing]` of `rsrc serve`'s configuration: where OpenTelemetry traces go. The standard `OTEL_*` variables, when
/// set, override these keys (see `docs/operations.md`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct TracingSection {
    /// The OTLP/HTTP endpoint (`http://collector:4318`); traces go to its `/v1/traces`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint: Option<String>,
    /// The `service.name` of the spans (default `rsrc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) service_name: Option<String>,
    /// The sampler, as `OTEL_TRACES_SAMPLER` names it (default
    /// `parentbased_always_on`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sampler: Option<String>,
    /// The sampler's argument (the ratio of `traceidratio`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sampler_arg: Option<f64>,
}

/// Spans kept at most in the export queue; more are dropped until it drains.
const QUEUE: usize = 4096;
/// The longest one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where traces go, and how they are sampled, resolved from the `OTEL_*` variables over
/// the configuration's `[tracing]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TraceSettings {
    /// The full URL spans are posted to (`…/v1/traces`).
    pub(crate) endpoint: String,
    pub(crate) service_name: Option<String>,
    pub(crate) sampler: String,
    pub(crate) sampler_arg: Option<f64>,
}

impl TraceSettings {
    /// The settings, or `None` when tracing is off (no endpoint, or `OTEL_SDK_DISABLED`).
    pub(crate) fn resolve(
        file: &TracingSection,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<TraceSettings>, String> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let base = |url: &str| format!("{}/v1/traces", url.trim_end_matches('/'));
        let endpoint = match (
            env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            env("OTEL_EXPORTER_OTLP_ENDPOINT"),
            &file.endpoint,
        ) {
            (Some(exact), _, _) => exact,
            (None, Some(url), _) => base(&url),
            (None, None, Some(url)) => base(url),
            (None, None, None) => return Ok(None),
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(format!(
                "the OTLP endpoint {endpoint:?} is not an http:// or https:// URL"
            ));
        }
        if let Some(protocol) = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .filter(|p| p != "http/protobuf")
        {
            return Err(format!(
                "OTLP protocol {protocol:?} is not supported: rsrc exports http/protobuf"
            ));
        }
        let sampler = env("OTEL_TRACES_SAMPLER")
            .or_else(|| file.sampler.clone())
            .unwrap_or_else(|| "parentbased_always_on".to_owned());
        let sampler_arg = match env("OTEL_TRACES_SAMPLER_ARG") {
            Some(arg) => Some(
                arg.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("OTEL_TRACES_SAMPLER_ARG {arg:?} is not a number"))?,
            ),
            None => file.sampler_arg,
        };
        let settings = TraceSettings {
            endpoint,
            service_name: env("OTEL_SERVICE_NAME").or_else(|| file.service_name.clone()),
            sampler,
            sampler_arg,
        };
        settings.sampler()?;
        Ok(Some(settings))
    }

    /// The sampler `OTEL_TRACES_SAMPLER` names (the ratio, when one is used, in 0..=1).
    fn sampler(&self) -> Result<Sampler, String> {
        let ratio = || match self.sampler_arg {
            None => Ok(1.0),
            Some(r) if (0.0..=1.0).contains(&r) => Ok(r),
            Some(r) => Err(format!("the sampler's ratio {r} is not within 0..=1")),
        };
        Ok(match self.sampler.as_str() {
            "always_on" => Sampler::AlwaysOn,
            "always_off" => Sampler::AlwaysOff,
            "traceidratio" => Sampler::TraceIdRatioBased(ratio()?),
            "parentbased_always_on" => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
            "parentbased_always_off" => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
            "parentbased_traceidratio" => {
                Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio()?)))
            }
            other => {
                return Err(format!(
                    "unknown trace sampler {other:?} (always_on, always_off, traceidratio, \
                     parentbased_always_on, parentbased_always_off, parentbased_traceidratio)"
                ));
            }
        })
    }

    /// The SDK's tracer provider, exporting to the endpoint and sampling with `sampler`
    /// (this configuration's, which [`RequestTracer`] also decides with).
    fn provider(&self, sampler: Sampler) -> Result<SdkTracerProvider, String> {
        // The exporter's client (rustls, for https:// collectors) takes the process's
        // crypto provider, which must be set before it is built: this binary's ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(self.endpoint.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .with_headers(HashMap::new())
            .build()
            .map_err(|e| format!("cannot export traces to {}: {e}", self.endpoint))?;
        let batch = BatchSpanProcessor::builder(exporter)
            .with_batch_config(
                BatchConfigBuilder::default()
                    .with_max_queue_size(QUEUE)
                    .build(),
            )
            .build();
        let mut resource = opentelemetry_sdk::Resource::builder().with_attribute(
            opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
        );
        resource = match &self.service_name {
            Some(name) => resource.with_service_name(name.clone()),
            None => resource.with_service_name("rsrc"),
        };
        Ok(SdkTracerProvider::builder()
            .with_span_processor(batch)
            .with_sampler(sampler)
            .with_id_generator(Handed)
            .with_resource(resource.build())
            .build())
    }
}

/// The installed logging and tracing; dropping it flushes the spans still queued
/// (bounded by the export timeout).
pub(crate) struct Telemetry {
    provider: Option<SdkTracerProvider>,
    sampler: Option<Sampler>,
}

impl Telemetry {
    /// How the server samples and parents its requests' spans.
    pub(crate) fn request_tracing(&self) -> RequestTracer {
        RequestTracer {
            sampler: self.sampler.clone(),
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(e) = provider.shutdown()
        {
            eprintln!("rsrc: traces not all exported: {e}");
        }
    }
}

/// Installs the process's logging (the `RSRC_LOG` filter, else `verbose`'s level) and,
/// with `traces`, the OpenTelemetry layer that exports the engine's spans.
pub(crate) fn init(
    verbose: u8,
    format: LogFormat,
    traces: Option<&TraceSettings>,
) -> Result<Telemetry, String> {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    // The request's span (target `rsrc::request`, at info) is kept, and its fields written
    // on every line logged inside it, only at `-v` and beyond (or `RSRC_LOG` naming it):
    // keeping it costs every request.
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("RSRC_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default))
    };
    let fmt = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(filter())
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .with_writer(std::io::stderr)
            .with_filter(filter())
            .boxed(),
    };
    let sampler = traces.map(TraceSettings::sampler).transpose()?;
    let provider = traces
        .zip(sampler.clone())
        .map(|(settings, sampler)| settings.provider(sampler))
        .transpose()?;
    let otel = provider.as_ref().map(exporting_layer);
    tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init()
        .map_err(|e| format!("cannot install logging: {e}"))?;
    EXPORTING.store(provider.is_some(), std::sync::atomic::Ordering::Release);
    Ok(Telemetry { provider, sampler })
}

/// The layer that exports the engine's spans (requests, providers, the cache, the bus,
/// SQLite, PostgreSQL, the client) through `provider`, whatever the log level: an
/// unsampled request's not at all, and a span that only continues a trace (the cache, a
/// provider call, a statement) only inside one that is exported. Neither the thread nor
/// the time a span spent idle is recorded: per span, they cost more than they tell.
fn exporting_layer<S>(provider: &SdkTracerProvider) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing::subscriber::Interest;
    use tracing_subscriber::filter::{DynFilterFn, FilterExt as _, LevelFilter, Targets};
    let targets = Targets::new()
        .with_target("rsrc", LevelFilter::INFO)
        .with_target("rsrc_providers", LevelFilter::INFO)
        .with_target("rsrc_cli", LevelFilter::INFO)
        .with_target(rsrc::observe::UNSAMPLED_TARGET, LevelFilter::OFF);
    let continued =
        DynFilterFn::new(|meta, cx| starts_trace(meta.target()) || cx.lookup_current().is_some())
            .with_callsite_filter(|meta| {
                if starts_trace(meta.target()) {
                    Interest::always()
                } else {
                    Interest::sometimes()
                }
            });
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("rsrc"))
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_filter(targets.and(continued))
}

/// Whether a span of `target` may start a trace: a request's, a client's (`rsrc ui`),
/// the command's. Any other is exported only inside an exported span.
fn starts_trace(target: &str) -> bool {
    target == rsrc::observe::REQUEST_TARGET
        || target == rsrc_client::CLIENT_TARGET
        || target == "rsrc_cli"
}

/// The trace context `carrier` holds, read by the W3C propagators.
struct Carried<'a>(TraceCarrier<'a>);

impl Extractor for Carried<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.0.traceparent,
            "tracestate" => self.0.tracestate,
            "baggage" => self.0.baggage,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate", "baggage"]
    }
}

/// The server's [`RequestTracing`]: decides whether a request is sampled with the
/// configured sampler, before its span exists, and makes the span a child of the trace
/// its client carried. Without OpenTelemetry, every request is "sampled" (nothing
/// exports it) and only a well-formed `traceparent`'s trace id is recorded, for the logs.
#[derive(Debug, Clone)]
pub(crate) struct RequestTracer {
    /// The configured sampler, when traces are exported.
    sampler: Option<Sampler>,
}

impl RequestTracer {
    /// The carried context, as the W3C propagators read it.
    fn extract(carrier: TraceCarrier<'_>) -> opentelemetry::Context {
        let cx = TraceContextPropagator::new().extract(&Carried(carrier));
        BaggagePropagator::new().extract_with_context(&cx, &Carried(carrier))
    }
}

impl RequestTracing for RequestTracer {
    fn sampled(&self, carrier: TraceCarrier<'_>) -> bool {
        use opentelemetry::trace::SpanKind;
        use opentelemetry_sdk::trace::SamplingDecision;
        use opentelemetry_sdk::trace::ShouldSample as _;
        let Some(sampler) = &self.sampler else {
            return true;
        };
        let cx = Self::extract(carrier);
        let parent = cx.span().span_context().clone();
        // The SDK decides again when it builds the span, from the same parent and trace
        // id: a new trace's id is drawn here and handed to it (`Handed`), so that a ratio
        // sampler gives the same answer both times.
        let trace_id = if parent.is_valid() {
            parent.trace_id()
        } else {
            RandomIdGenerator::default().new_trace_id()
        };
        let decision = sampler
            .should_sample(
                Some(&cx),
                trace_id,
                "mcp.request",
                &SpanKind::Server,
                &[],
                &[],
            )
            .decision;
        let sampled = decision != SamplingDecision::Drop;
        if sampled && !parent.is_valid() {
            HANDED.set(Some(trace_id));
        }
        sampled
    }

    fn adopt(&self, span: &tracing::Span, carrier: TraceCarrier<'_>, sampled: bool) {
        if self.sampler.is_some() && sampled {
            let cx = Self::extract(carrier);
            if cx.span().span_context().is_valid() {
                let _ = span.set_parent(cx);
            }
            // Builds the span now, on this thread, with the trace id handed over.
            let id = span.context().span().span_context().trace_id();
            HANDED.take();
            if id != opentelemetry::TraceId::INVALID {
                span.record("trace_id", tracing::field::display(id));
            }
        } else if let Some(id) = carrier.traceparent.and_then(trace_id_of) {
            span.record("trace_id", id);
        }
    }
}

thread_local! {
    /// The trace id [`RequestTracer::sampled`] drew for a new trace it sampled, until the
    /// SDK builds that request's span (in [`RequestTracer::adopt`], on the same thread).
    static HANDED: std::cell::Cell<Option<opentelemetry::TraceId>> =
        const { std::cell::Cell::new(None) };
}

/// The SDK's ids: random, except a new trace's id [`RequestTracer::sampled`] handed over.
#[derive(Debug)]
struct Handed;

impl IdGenerator for Handed {
    fn new_trace_id(&self) -> opentelemetry::TraceId {
        HANDED
            .take()
            .unwrap_or_else(|| RandomIdGenerator::default().new_trace_id())
    }

    fn new_span_id(&self) -> opentelemetry::SpanId {
        RandomIdGenerator::default().new_span_id()
    }
}

/// The trace id of a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), if it is one
/// (an all-zero id is invalid).
fn trace_id_of(traceparent: &str) -> Option<&str> {
    let mut parts = traceparent.split('-');
    let (version, id, parent, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version == "00" && parts.next().is_some() {
        return None;
    }
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    (hex(version, 2) && version != "ff" && hex(id, 32) && hex(parent, 16) && hex(flags, 2))
        .then_some(id)
        .filter(|id| id.bytes().any(|b| b != b'0'))
}

/// Whether this process exports traces (set once, by [`init`]).
static EXPORTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What the client's requests carry in `_meta` to continue this process's trace: the
/// current span's context, when traces are exported; nothing otherwise.
pub(crate) fn client_trace_context() -> Option<rsrc_client::TraceContext> {
    EXPORTING
        .load(std::sync::atomic::Ordering::Acquire)
        .then(|| rsrc_client::TraceContext(std::sync::Arc::new(current_context)))
}

/// `_meta` members carrying the current span's trace context (W3C `traceparent` and
/// `tracestate`, `baggage`), for the client's requests.
fn current_context() -> Vec<(String, String)> {
    struct Fields(Vec<(String, String)>);
    impl Injector for Fields {
        fn set(&mut self, key: &str, value: String) {
            self.0.push((key.to_owned(), value));
        }
    }
    let cx = tracing::Span::current().context();
    let mut fields = Fields(Vec::new());
    TraceContextPropagator::new().inject_context(&cx, &mut fields);
    BaggagePropagator::new().inject_context(&cx, &mut fields);
    fields.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.get(name).cloned()
    }

    #[test]
    fn tracing_is_off_without_an_endpoint() {
        let off = TraceSettings::resolve(&TracingSection::default(), env(&[])).unwrap();
        assert_eq!(off, None);
    }

    #[test]
    fn the_variables_override_the_file_and_the_generic_endpoint_gets_the_traces_path() {
        let file = TracingSection {
            endpoint: Some("http://file:4318".into()),
            service_name: Some("from-file".into()),
            sampler: Some("always_off".into()),
            sampler_arg: None,
        };
        let s = TraceSettings::resolve(
            &file,
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
                ("OTEL_SERVICE_NAME", "from-env"),
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "0.5"),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(s.service_name.as_deref(), Some("from-env"));
        assert_eq!(s.sampler, "traceidratio");
        assert_eq!(s.sampler_arg, Some(0.5));
        // The signal's own endpoint is taken as it is.
        let exact = TraceSettings::resolve(
            &file,
            env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/custom")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(exact.endpoint, "http://c:4318/custom");
        assert_eq!(exact.sampler, "always_off");
    }

    #[test]
    fn bad_settings_are_refused_with_their_name() {
        let file = TracingSection::default();
        for (vars, needle) in [
            (
                vec![
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                    ("OTEL_TRACES_SAMPLER", "sometimes"),
                ],
                "unknown trace sampler",
            ),
            (
                vec![
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                    ("OTEL_TRACES_SAMPLER", "traceidratio"),
                    ("OTEL_TRACES_SAMPLER_ARG", "2"),
                ],
                "not within 0..=1",
            ),
            (
                vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
                "not an http:// or https:// URL",
            ),
            (
                vec![
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ],
                "not supported",
            ),
        ] {
            let e = TraceSettings::resolve(&file, env(&vars)).unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
        let disabled = TraceSettings::resolve(
            &file,
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_SDK_DISABLED", "true"),
            ]),
        )
        .unwrap();
        assert_eq!(disabled, None);
    }

    /// For each of many requests, half with a sampled parent: what `sampled` decided
    /// before the span existed is what the SDK decides when it builds the span (the same
    /// trace id, handed over), and the spans under it are built only when it is sampled.
    #[test]
    fn the_sampling_decided_before_the_span_is_the_sdks_and_rules_the_spans_under_it() {
        use opentelemetry::trace::TraceContextExt as _;
        use rsrc::observe::{REQUEST_TARGET, UNSAMPLED_TARGET};
        for name in ["traceidratio", "parentbased_traceidratio"] {
            let settings = TraceSettings {
                endpoint: String::new(),
                service_name: None,
                sampler: name.to_owned(),
                sampler_arg: Some(0.5),
            };
            let sampler = settings.sampler().unwrap();
            let provider = SdkTracerProvider::builder()
                .with_sampler(sampler.clone())
                .with_id_generator(Handed)
                .build();
            let tracer = RequestTracer {
                sampler: Some(sampler),
            };
            let subscriber = tracing_subscriber::registry().with(exporting_layer(&provider));
            let (mut kept, mut dropped) = (0, 0);
            tracing::subscriber::with_default(subscriber, || {
                for i in 0..200 {
                    let ids = RandomIdGenerator::default();
                    let parent = format!("00-{}-{}-01", ids.new_trace_id(), ids.new_span_id());
                    let carrier = TraceCarrier {
                        traceparent: (i % 2 == 1).then_some(parent.as_str()),
                        ..TraceCarrier::default()
                    };
                    let sampled = tracer.sampled(carrier);
                    let span = if sampled {
                        tracing::info_span!(target: REQUEST_TARGET, "mcp.request", trace_id = tracing::field::Empty)
                    } else {
                        tracing::info_span!(target: UNSAMPLED_TARGET, "mcp.request", trace_id = tracing::field::Empty)
                    };
                    tracer.adopt(&span, carrier, sampled);
                    assert_eq!(HANDED.take(), None, "a handed trace id was not taken");
                    let child =
                        span.in_scope(|| tracing::info_span!(target: "rsrc::cache", "cache"));
                    if sampled {
                        kept += 1;
                        let cx = span.context();
                        assert!(
                            cx.span().span_context().is_sampled(),
                            "{name}: the SDK dropped a sampled request"
                        );
                        let child = child.context();
                        assert!(child.span().span_context().is_sampled());
                        assert_eq!(
                            child.span().span_context().trace_id(),
                            cx.span().span_context().trace_id()
                        );
                    } else {
                        dropped += 1;
                        assert!(span.is_disabled(), "an unsampled request's span is made");
                        assert!(
                            !child.context().has_active_span(),
                            "a span under an unsampled request is built"
                        );
                    }
                }
            });
            assert!(
                kept > 0 && dropped > 0,
                "{name}: {kept} kept, {dropped} dropped"
            );
        }
    }

    #[test]
    fn only_a_well_formed_traceparent_gives_a_trace_id() {
        let id = "4bf92f3577b34da6a3ce929d0e0e4736";
        assert_eq!(
            trace_id_of(&format!("00-{id}-00f067aa0ba902b7-01")),
            Some(id)
        );
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n{\"evil\":1}",
        ] {
            assert_eq!(trace_id_of(bad), None, "{bad:?}");
        }
    }
}
