//! A soak test: a mixed load for a given time against one HTTP server (`mcp serve --http`, or
//! any server with the reference server's tools), sampling the server's resident memory and
//! open file descriptors, and judging whether they stay flat after warm-up.
//!
//! The load (`workloads`): calls on a legacy session and stateless ones; sessions opened
//! and abandoned; SSE streams dropped and resumed with `Last-Event-ID`; cancellations (by
//! hanging up, and by `notifications/cancelled`); a tool that sends log notifications.
//!
//! The verdict ([`Verdict`]): the first third of the run is warm-up; the last third's mean
//! RSS must not exceed the middle third's by more than 5% plus 2 MiB, its highest count of
//! open descriptors not the middle third's by more than 16, and no answer may be wrong.

mod exchange;
mod workloads;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use serde::Serialize;
use tokio::time::Instant;

use crate::http_client::Target;
use crate::proc_stats;
use workloads::Counters;

/// A soak run.
#[derive(Debug, Clone)]
pub struct Soak {
    /// The MCP endpoint.
    pub url: String,
    /// The server's process id (its memory and descriptors are read).
    pub pid: u32,
    /// How long the load runs.
    pub duration: Duration,
    /// How often the server is sampled.
    pub sample_every: Duration,
}

/// One reading of the server and of the load so far.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Seconds since the start.
    pub at_s: f64,
    /// Resident memory, in MiB.
    pub rss_mib: f64,
    /// Open file descriptors.
    pub fds: usize,
    /// Calls answered so far.
    pub calls: u64,
    /// Sessions abandoned so far.
    pub abandoned: u64,
    /// Streams dropped and resumed so far.
    pub resumed: u64,
    /// Resumptions of streams let go so far.
    pub let_go: u64,
    /// Calls cancelled so far.
    pub cancelled: u64,
    /// Log notifications received so far.
    pub notifications: u64,
    /// Failures so far.
    pub failures: u64,
}

/// Whether the server held steady.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Mean RSS of the middle third, in MiB.
    pub rss_middle_mib: f64,
    /// Mean RSS of the last third, in MiB.
    pub rss_last_mib: f64,
    /// Highest descriptor count of the middle third.
    pub fds_middle: usize,
    /// Highest descriptor count of the last third.
    pub fds_last: usize,
    /// Memory and descriptors flat after warm-up, and no failure.
    pub steady: bool,
    /// What was not, in words.
    pub problems: Vec<String>,
}

/// What a soak found.
#[derive(Debug, Clone, Serialize)]
pub struct SoakResult {
    /// Every sample, in order.
    pub samples: Vec<Sample>,
    /// The judgement.
    pub verdict: Verdict,
    /// The first failures, if any.
    pub failure_examples: Vec<String>,
}

/// Open file descriptors of a process.
fn open_fds(pid: u32) -> Result<usize> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/fd"))?.count())
}

fn sample(pid: u32, start: Instant, counters: &Counters) -> Result<Sample> {
    let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    Ok(Sample {
        at_s: start.elapsed().as_secs_f64(),
        rss_mib: proc_stats::rss_bytes(pid)? as f64 / (1024.0 * 1024.0),
        fds: open_fds(pid)?,
        calls: load(&counters.calls),
        abandoned: load(&counters.abandoned),
        resumed: load(&counters.resumed),
        let_go: load(&counters.let_go),
        cancelled: load(&counters.cancelled),
        notifications: load(&counters.notifications),
        failures: load(&counters.failures),
    })
}

/// Judges the samples: flat after the first third, and no failure.
pub fn judge(samples: &[Sample]) -> Verdict {
    let n = samples.len();
    let (middle, last) = (&samples[n / 3..2 * n / 3], &samples[2 * n / 3..]);
    let mean = |s: &[Sample]| s.iter().map(|s| s.rss_mib).sum::<f64>() / s.len().max(1) as f64;
    let most = |s: &[Sample]| s.iter().map(|s| s.fds).max().unwrap_or(0);
    let (rss_middle_mib, rss_last_mib) = (mean(middle), mean(last));
    let (fds_middle, fds_last) = (most(middle), most(last));
    let mut problems = Vec::new();
    if n < 6 {
        problems.push(format!("{n} samples: too few to judge (at least 6)"));
    }
    if rss_last_mib > rss_middle_mib * 1.05 + 2.0 {
        problems.push(format!("memory grew after warm-up: {rss_middle_mib:.1} MiB, then {rss_last_mib:.1} MiB"));
    }
    if fds_last > fds_middle + 16 {
        problems.push(format!("open descriptors grew after warm-up: {fds_middle}, then {fds_last}"));
    }
    let failures = samples.last().map_or(0, |s| s.failures);
    if failures > 0 {
        problems.push(format!("{failures} wrong answers or failed requests"));
    }
    let stalled = samples.last().is_none_or(|s| s.calls == 0 || s.resumed + s.let_go == 0 || s.cancelled == 0);
    if stalled {
        problems.push("a workload did nothing".into());
    }
    Verdict { rss_middle_mib, rss_last_mib, fds_middle, fds_last, steady: problems.is_empty(), problems }
}

/// Runs the soak; prints a line per sample on stderr as it goes.
pub async fn run(soak: &Soak) -> Result<SoakResult> {
    if soak.sample_every.is_zero() || soak.duration < soak.sample_every * 6 {
        bail!("the run must last at least six samples");
    }
    let target = Target::parse(&soak.url).await?;
    let counters = Arc::new(Counters::default());
    let start = Instant::now();
    let until = start + soak.duration;
    let mut tasks = Vec::new();
    let every = Duration::from_millis(100);
    macro_rules! spawn {
        ($work:path, $every:expr) => {{
            let (target, counters) = (target.clone(), counters.clone());
            tasks.push(tokio::spawn(async move { $work(target, until, $every, &counters).await }));
        }};
    }
    // Two callers as fast as answers come; the rest paced.
    spawn!(workloads::calls, Duration::ZERO);
    spawn!(workloads::calls, Duration::ZERO);
    spawn!(workloads::abandon, every);
    spawn!(workloads::drop_and_resume, every);
    spawn!(workloads::cancel, every);
    spawn!(workloads::notifications, every);
    let mut samples = Vec::new();
    let mut next = start;
    while next <= until {
        tokio::time::sleep_until(next).await;
        let s = sample(soak.pid, start, &counters)?;
        eprintln!(
            "{:>7.0} s  rss {:>7.1} MiB  fds {:>4}  calls {:>8}  abandoned {:>6}  resumed {:>6}  let go {:>4}  cancelled {:>6}  logs {:>6}  failures {}",
            s.at_s, s.rss_mib, s.fds, s.calls, s.abandoned, s.resumed, s.let_go, s.cancelled, s.notifications, s.failures
        );
        samples.push(s);
        next += soak.sample_every;
    }
    for t in tasks {
        let _ = t.await;
    }
    let verdict = judge(&samples);
    let failure_examples = counters.failure_examples.lock().clone();
    Ok(SoakResult { samples, verdict, failure_examples })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rss: &[f64], fds: &[usize]) -> Vec<Sample> {
        rss.iter()
            .zip(fds)
            .enumerate()
            .map(|(i, (&rss_mib, &fds))| Sample {
                at_s: i as f64,
                rss_mib,
                fds,
                calls: 10,
                abandoned: 1,
                resumed: 1,
                let_go: 0,
                cancelled: 1,
                notifications: 1,
                failures: 0,
            })
            .collect()
    }

    #[test]
    fn flat_after_warm_up_is_steady_and_growth_is_not() {
        let flat = judge(&samples(
            &[5.0, 20.0, 30.0, 30.5, 30.2, 31.0, 30.8, 30.9, 31.0],
            &[9, 20, 30, 30, 31, 30, 32, 30, 31],
        ));
        assert!(flat.steady, "{:?}", flat.problems);
        let leak = judge(&samples(&[5.0, 20.0, 30.0, 32.0, 34.0, 36.0, 38.0, 40.0, 42.0], &[9; 9]));
        assert!(!leak.steady);
        assert!(leak.problems[0].contains("memory grew"), "{:?}", leak.problems);
        let fds = judge(&samples(&[30.0; 9], &[10, 20, 30, 40, 50, 60, 70, 80, 90]));
        assert!(fds.problems.iter().any(|p| p.contains("descriptors")), "{:?}", fds.problems);
        let mut failing = samples(&[30.0; 9], &[9; 9]);
        failing[8].failures = 2;
        assert!(!judge(&failing).steady);
        assert!(!judge(&samples(&[30.0; 3], &[9; 3])).steady, "too few samples");
    }
}
