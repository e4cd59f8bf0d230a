//! Spawn to first call: the time from starting a stdio server to the first correct answer
//! to `tools/call` (after `initialize` and `notifications/initialized`), repeated.

use crate::mcp;
use crate::process::SpawnOptions;
use crate::stats;
use crate::stdio_load::{handshake, read_until, send, StdioServer};
use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// One spawn measurement.
#[derive(Debug, Clone)]
pub struct SpawnLoad {
    /// The server command.
    pub command: Vec<String>,
    /// How it is started.
    pub spawn: SpawnOptions,
    /// How many times.
    pub repeat: usize,
    /// Longest wait for one first call.
    pub timeout: Duration,
}

/// What a spawn measurement found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SpawnResult {
    /// Each successful try, in milliseconds, in order.
    pub samples_ms: Vec<f64>,
    /// Median of the samples.
    pub median_ms: Option<f64>,
    /// 90th percentile of the samples.
    pub p90_ms: Option<f64>,
    /// Tries that failed.
    pub failures: usize,
    /// The first failure, if any.
    pub first_error: Option<String>,
}

/// Runs the measurement.
pub async fn run(load: &SpawnLoad) -> Result<SpawnResult> {
    if load.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let mut samples = Vec::new();
    let (mut failures, mut first_error) = (0, None);
    for _ in 0..load.repeat {
        match tokio::time::timeout(load.timeout, once(load)).await {
            Ok(Ok(ms)) => samples.push(ms),
            Ok(Err(e)) => {
                failures += 1;
                first_error.get_or_insert(format!("{e:#}"));
            }
            Err(_) => {
                failures += 1;
                first_error.get_or_insert(format!("no first answer within {:?}", load.timeout));
            }
        }
    }
    Ok(SpawnResult {
        median_ms: stats::median(&samples),
        p90_ms: stats::percentile(&samples, 90.0),
        samples_ms: samples,
        failures,
        first_error,
    })
}

async fn once(load: &SpawnLoad) -> Result<f64> {
    let t0 = Instant::now();
    let (process, mut stdin, mut stdout) = StdioServer::spawn(&load.command, &load.spawn)?;
    let outcome = async {
        let (protocol, _) = handshake(&mut stdin, &mut stdout).await?;
        let text = mcp::echo_text(0, 1);
        send(&mut stdin, &mcp::echo_call(1, &text, &protocol)).await?;
        read_until(&mut stdout, |m| match mcp::check_echo(m, 1, &text) {
            Ok(true) => Some(Ok(())),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        })
        .await
    }
    .await;
    let elapsed = t0.elapsed();
    let hint = process.log_hint();
    drop(stdin);
    process.stop().await;
    outcome.map_err(|e| anyhow!("{e:#}{hint}"))?;
    Ok(elapsed.as_secs_f64() * 1e3)
}
