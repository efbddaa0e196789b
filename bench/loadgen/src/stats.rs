//! Order statistics of one workload's latencies, and medians and ranges across rounds.
//!
//! Invariant: a percentile is always one of the samples (nearest rank), never an
//! interpolation between two, and no statistic of an empty set is made up: it is `None`.

/// The nearest-rank percentile `p` (0–100) of `samples`, which it sorts.
pub(crate) fn percentile(samples: &mut [u64], p: f64) -> Option<u64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = ((p / 100.0) * samples.len() as f64).ceil() as usize;
    Some(samples[rank.clamp(1, samples.len()) - 1])
}

/// The median of `values` (the mean of the two middle ones for an even count), with the
/// smallest and the largest: `(median, min, max)`.
pub(crate) fn median_range(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    Some((median, sorted[0], sorted[n - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_samples() {
        let mut samples: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentile(&mut samples, 50.0), Some(50));
        assert_eq!(percentile(&mut samples, 99.0), Some(99));
        assert_eq!(percentile(&mut samples, 100.0), Some(100));
        assert_eq!(percentile(&mut samples, 0.0), Some(1));
        assert_eq!(percentile(&mut [7], 99.0), Some(7));
        assert_eq!(percentile(&mut [], 50.0), None);
    }

    #[test]
    fn medians_take_the_middle_and_report_the_range() {
        assert_eq!(median_range(&[3.0, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(median_range(&[4.0, 1.0, 2.0, 3.0]), Some((2.5, 1.0, 4.0)));
        assert_eq!(median_range(&[f64::NAN, 5.0]), Some((5.0, 5.0, 5.0)));
        assert_eq!(median_range(&[]), None);
    }
}
