//! The catalogue's recording functions, checked against a recorder of their own.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};

use super::*;

/// A recorder that keeps the counters, by series (`name{label="value",…}`), and the
/// help texts of the counters described.
#[derive(Default)]
struct Counters {
    series: Mutex<BTreeMap<String, Arc<AtomicU64>>>,
    help: Mutex<BTreeMap<String, String>>,
}

impl Counters {
    fn value(&self, series: &str) -> Option<u64> {
        let all = self.series.lock().unwrap();
        all.get(series).map(|c| c.load(Ordering::Relaxed))
    }
}

impl Recorder for Counters {
    fn describe_counter(&self, key: KeyName, _: Option<Unit>, help: SharedString) {
        let mut described = self.help.lock().unwrap();
        described.insert(key.as_str().to_owned(), help.to_string());
    }
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}=\"{}\"", l.key(), l.value()))
            .collect();
        let series = format!("{}{{{}}}", key.name(), labels.join(","));
        let mut all = self.series.lock().unwrap();
        Counter::from_arc(Arc::clone(all.entry(series).or_default()))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

#[test]
fn a_listing_fallback_is_counted_under_its_reason_and_every_reason_starts_at_zero() {
    let recorder = Counters::default();
    metrics::with_local_recorder(&recorder, || {
        describe();
        listing_fallback("watch_limit");
        listing_fallback("watch_limit");
        listing_fallback("overflow");
    });
    let series =
        |reason: &str| format!("rsrc_listing_freshness_fallbacks_total{{reason=\"{reason}\"}}");
    assert_eq!(recorder.value(&series("watch_limit")), Some(2));
    assert_eq!(recorder.value(&series("overflow")), Some(1));
    for reason in ["error", "unwatchable", "no_events", "rebuild"] {
        assert_eq!(recorder.value(&series(reason)), Some(0), "{reason}");
    }
    let help = recorder.help.lock().unwrap();
    assert!(
        help.get("rsrc_listing_freshness_fallbacks_total")
            .is_some_and(|h| h.contains("directory stamps")),
        "{help:?}"
    );
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "sometimes")]
fn a_listing_fallback_for_a_word_not_in_the_catalogue_is_refused() {
    listing_fallback("sometimes");
}
