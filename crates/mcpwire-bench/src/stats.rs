//! Small statistics: medians and percentiles of samples, and latency histograms.

use hdrhistogram::Histogram;
use serde::Serialize;
use std::time::Duration;

/// The median of `values` (the mean of the two middle values for an even count), or `None`
/// for an empty slice. NaN values are ignored.
pub fn median(values: &[f64]) -> Option<f64> {
    percentile(values, 50.0)
}

/// The `p`-th percentile (0..=100) of `values` by linear interpolation between closest ranks,
/// or `None` for an empty slice. NaN values are ignored.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    let frac = rank - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// The median of the values some runs have (`None` where a run has none).
pub fn median_of(values: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().flatten().collect();
    median(&v)
}

/// Call latencies, recorded in nanoseconds (1 µs .. 60 s, three significant digits).
pub struct Latencies {
    hist: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        Self::new()
    }
}

impl Latencies {
    /// An empty recorder.
    pub fn new() -> Self {
        // Constant bounds that hdrhistogram accepts (low >= 1, high >= 2 * low, 3 digits).
        let hist = Histogram::new_with_bounds(1_000, 60_000_000_000, 3).expect("constant histogram bounds are valid");
        Self { hist }
    }

    /// Records one latency (clamped into the histogram's range).
    pub fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.hist.saturating_record(ns.max(1_000));
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Latencies) {
        // Both histograms share the same bounds, so adding never fails in practice; a failure
        // would only lose samples, never a panic.
        let _ = self.hist.add(&other.hist);
    }

    /// How many samples were recorded.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// Whether no sample was recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The `q`-quantile (0..=1) in milliseconds, `None` when empty.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        (!self.hist.is_empty()).then(|| self.hist.value_at_quantile(q) as f64 / 1e6)
    }

    /// p50, p99, p99.9 and the maximum, in milliseconds.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            p50_ms: self.quantile_ms(0.5),
            p99_ms: self.quantile_ms(0.99),
            p999_ms: self.quantile_ms(0.999),
            max_ms: (!self.hist.is_empty()).then(|| self.hist.max() as f64 / 1e6),
        }
    }
}

/// Latency percentiles of one measurement, in milliseconds (`None` when nothing completed).
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct LatencySummary {
    /// Median latency.
    pub p50_ms: Option<f64>,
    /// 99th percentile.
    pub p99_ms: Option<f64>,
    /// 99.9th percentile.
    pub p999_ms: Option<f64>,
    /// Largest latency seen.
    pub max_ms: Option<f64>,
}

impl LatencySummary {
    /// The field-by-field median of several runs' summaries.
    pub fn median(runs: &[LatencySummary]) -> LatencySummary {
        LatencySummary {
            p50_ms: median_of(runs.iter().map(|r| r.p50_ms)),
            p99_ms: median_of(runs.iter().map(|r| r.p99_ms)),
            p999_ms: median_of(runs.iter().map(|r| r.p999_ms)),
            max_ms: median_of(runs.iter().map(|r| r.max_ms)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 7.0]), Some(7.0));
    }

    #[test]
    fn percentile_interpolates() {
        let v: Vec<f64> = (1..=11).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&v, 100.0), Some(11.0));
        assert_eq!(percentile(&v, 90.0), Some(10.0));
        assert_eq!(percentile(&[1.0, 2.0], 90.0), Some(1.9));
    }

    #[test]
    fn median_of_skips_missing_runs() {
        assert_eq!(median_of([Some(1.0), None, Some(5.0), Some(3.0)]), Some(3.0));
        assert_eq!(median_of([None, None]), None);
    }

    #[test]
    fn latency_quantiles() {
        let mut a = Latencies::new();
        for ms in 1..=1000u64 {
            a.record(Duration::from_micros(ms * 10)); // 0.01 ms .. 10 ms
        }
        let mut b = Latencies::new();
        b.record(Duration::from_secs(2));
        a.merge(&b);
        assert_eq!(a.len(), 1001);
        let s = a.summary();
        let p50 = s.p50_ms.unwrap();
        assert!((4.9..=5.1).contains(&p50), "p50 {p50}");
        let p99 = s.p99_ms.unwrap();
        assert!((9.8..=10.0).contains(&p99), "p99 {p99}");
        let max = s.max_ms.unwrap();
        assert!((1999.0..=2001.0).contains(&max), "max {max}");
        assert_eq!(Latencies::new().summary(), LatencySummary::default());
    }
}
