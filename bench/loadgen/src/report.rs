//! The Markdown report: rsrc's ratio to every other server (the median of the ratios
//! taken within each round, with their range), then each server's own figures.
//!
//! Invariant: a ratio is only ever taken between two measurements of the same round,
//! transport and workload that both succeeded; a failed one shows as FAIL, never as a
//! figure.

use std::fmt::Write as _;

use crate::runner::{Figures, Record, SATURATED};
use crate::servers::Transport;
use crate::stats::median_range;
use crate::workloads::Workload;

/// The records of one server, transport and workload, by round.
fn cell<'a>(
    records: &'a [Record],
    server: &str,
    transport: Transport,
    workload: Workload,
) -> Vec<&'a Record> {
    records
        .iter()
        .filter(|r| r.server == server && r.transport == transport && r.workload == workload)
        .collect()
}

/// Within each round where both succeeded with a figure above zero,
/// `of(reference) / of(other)`.
fn ratios(
    records: &[Record],
    reference: &str,
    other: &str,
    transport: Transport,
    workload: Workload,
    of: impl Fn(&Figures) -> f64,
) -> Vec<f64> {
    let ours = cell(records, reference, transport, workload);
    let theirs = cell(records, other, transport, workload);
    ours.iter()
        .filter_map(|a| {
            let b = theirs.iter().find(|b| b.round == a.round)?;
            let (Ok(a), Ok(b)) = (&a.outcome, &b.outcome) else {
                return None;
            };
            let (x, y) = (of(a), of(b));
            // A zero (CPU under one clock tick) makes no ratio, not 0× or ∞.
            (x > 0.0 && y > 0.0).then(|| x / y)
        })
        .collect()
}

/// `1.85× (1.70–2.01)`, or the median alone when the range is nil (one value).
fn ratio_text(values: &[f64]) -> String {
    match median_range(values) {
        None => "—".to_owned(),
        Some((m, lo, hi)) if hi - lo < 0.005 => format!("{m:.2}×"),
        Some((m, lo, hi)) => format!("{m:.2}× ({lo:.2}–{hi:.2})"),
    }
}

/// The median over rounds of a figure of one cell, or FAIL.
fn median_of(records: &[&Record], of: impl Fn(&Figures) -> f64) -> Option<f64> {
    let values: Vec<f64> = records
        .iter()
        .filter_map(|r| r.outcome.as_ref().ok())
        .map(&of)
        .collect();
    median_range(&values).map(|(m, _, _)| m)
}

/// The whole report.
pub(crate) fn markdown(
    records: &[Record],
    servers: &[String],
    reference: &str,
    heading: &str,
) -> String {
    let mut transports: Vec<Transport> = records.iter().map(|r| r.transport).collect();
    transports.sort();
    transports.dedup();
    let mut workloads: Vec<Workload> = records.iter().map(|r| r.workload).collect();
    workloads.sort();
    workloads.dedup();
    let others: Vec<&String> = servers.iter().filter(|s| *s != reference).collect();
    let mut out = String::new();
    let _ = writeln!(out, "{heading}\n");
    if servers.iter().any(|s| s == reference) && !others.is_empty() {
        let _ = writeln!(out, "### {reference} against each server\n");
        let _ = writeln!(
            out,
            "Throughput: {reference}'s operations per second ÷ the other's (above 1 is {reference} faster). CPU per op and peak RSS: {reference}'s ÷ the other's (below 1 is {reference} cheaper). Each cell is the median of the ratios taken within each round, with their range.\n"
        );
        let mut header = String::from("| transport | workload |");
        let mut rule = String::from("|---|---|");
        for other in &others {
            let _ = write!(
                header,
                " ops/s vs {other} | CPU/op vs {other} | peak RSS vs {other} |"
            );
            rule.push_str("---|---|---|");
        }
        let _ = writeln!(out, "{header}\n{rule}");
        for &t in &transports {
            for &w in &workloads {
                let mut row = format!("| {} | {} |", t.name(), w.name());
                for other in &others {
                    let speed = ratios(records, reference, other, t, w, |f| f.ops_per_s);
                    let cpu = ratios(records, reference, other, t, w, |f| f.cpu_us_per_op);
                    let rss = ratios(records, reference, other, t, w, |f| f.peak_rss_kib as f64);
                    let _ = write!(
                        row,
                        " {} | {} | {} |",
                        ratio_text(&speed),
                        ratio_text(&cpu),
                        ratio_text(&rss)
                    );
                }
                let _ = writeln!(out, "{row}");
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, "### Each server's figures (medians over rounds)\n");
    let _ = writeln!(
        out,
        "p50 and p99 are per request (per page for `list-all`, whose operation is a complete listing). CPU is the server's user + system time, all threads. Idle RSS is read right after `initialize`; peak RSS at the end of the workload. Startup is spawn to `initialize` answered. Loadgen CPU is the client's own CPU over the wall time: near 1 (marked !), the client, not the server, was the limit.\n"
    );
    let _ = writeln!(
        out,
        "| transport | workload | server | ops/s | p50 µs | p99 µs | CPU µs/op | peak RSS MiB | idle RSS MiB | startup ms | loadgen CPU |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|");
    for &t in &transports {
        for &w in &workloads {
            for server in servers {
                let rounds = cell(records, server, t, w);
                if rounds.is_empty() {
                    continue;
                }
                if let Some(failed) = rounds.iter().find_map(|r| r.outcome.as_ref().err()) {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {server} | **FAIL**: {} | | | | | | | |",
                        t.name(),
                        w.name(),
                        failed.replace('|', "/")
                    );
                    continue;
                }
                let m = |of: fn(&Figures) -> f64| median_of(&rounds, of).unwrap_or(f64::NAN);
                let loadgen = m(|f| f.loadgen_cpu_frac);
                let _ = writeln!(
                    out,
                    "| {} | {} | {server} | {:.1} | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} | {:.0} | {loadgen:.2}{} |",
                    t.name(),
                    w.name(),
                    m(|f| f.ops_per_s),
                    m(|f| f.p50_us as f64),
                    m(|f| f.p99_us as f64),
                    m(|f| f.cpu_us_per_op),
                    m(|f| f.peak_rss_kib as f64) / 1024.0,
                    m(|f| f.idle_rss_kib as f64) / 1024.0,
                    m(|f| f.startup_ms),
                    if loadgen > SATURATED { " !" } else { "" },
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(round: usize, server: &str, ops_per_s: f64, ok: bool) -> Record {
        Record {
            round,
            server: server.to_owned(),
            transport: Transport::Stdio,
            workload: Workload::ReadSmall,
            outcome: if ok {
                Ok(Figures {
                    ops_per_s,
                    cpu_us_per_op: 100.0 / ops_per_s,
                    peak_rss_kib: 1024,
                    ..Figures::default()
                })
            } else {
                Err("wrong bytes".to_owned())
            },
        }
    }

    #[test]
    fn ratios_pair_measurements_of_the_same_round() {
        let records = vec![
            record(0, "rsrc", 200.0, true),
            record(0, "other", 100.0, true),
            record(1, "rsrc", 300.0, true),
            record(1, "other", 100.0, true),
            record(2, "rsrc", 100.0, true),
            record(2, "other", 100.0, false),
        ];
        let r = ratios(
            &records,
            "rsrc",
            "other",
            Transport::Stdio,
            Workload::ReadSmall,
            |f| f.ops_per_s,
        );
        assert_eq!(r, vec![2.0, 3.0]);
        assert_eq!(ratio_text(&r), "2.50× (2.00–3.00)");
    }

    #[test]
    fn a_failed_measurement_shows_as_fail_not_as_a_figure() {
        let records = vec![
            record(0, "rsrc", 200.0, true),
            record(0, "other", 100.0, false),
        ];
        let text = markdown(&records, &["rsrc".into(), "other".into()], "rsrc", "## t");
        assert!(
            text.contains("| stdio | read-small | other | **FAIL**: wrong bytes"),
            "{text}"
        );
        assert!(
            text.contains("| stdio | read-small | — | — | — |"),
            "{text}"
        );
    }

    #[test]
    fn a_saturated_loadgen_is_marked_in_its_row() {
        let mut busy = record(0, "rsrc", 100.0, true);
        if let Ok(f) = &mut busy.outcome {
            f.loadgen_cpu_frac = 0.95;
            f.startup_ms = 12.0;
        }
        let text = markdown(&[busy], &["rsrc".into()], "rsrc", "## t");
        let row = text
            .lines()
            .find(|l| l.starts_with("| stdio | read-small | rsrc |"))
            .expect("a row");
        assert!(row.ends_with("| 12 | 0.95 ! |"), "{row}");
        assert_eq!(row.matches('|').count(), 12, "{row}");
    }
}
