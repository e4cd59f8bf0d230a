//! Before and after: one server's figures in this run beside those of a previous run (the
//! `results.json` the suite replaces). Throughput is compared as the ratio to the raw baseline
//! measured in the same run, so that a machine faster or slower on one day does not pass for
//! a change in the code; CPU per call, p99 and memory are compared as they are.

use crate::http_load::Mode;
use crate::report::{HTTP_BASELINE, PIPE_BASELINE};
use crate::suite::{fmt_opt, LoadMedian, ServerResults, SuiteResults};
use std::fmt::Write as _;

/// One load figure of a run: the ratio to its baseline, CPU per call and p99.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct LoadFigures {
    vs_baseline: Option<f64>,
    cpu_us: Option<f64>,
    p99_ms: Option<f64>,
}

fn load_figures(median: &LoadMedian, baseline: Option<&LoadMedian>) -> LoadFigures {
    let vs_baseline = match (median.req_per_s, baseline.and_then(|b| b.req_per_s)) {
        (Some(ours), Some(base)) if base > 0.0 => Some(ours / base),
        _ => None,
    };
    LoadFigures { vs_baseline, cpu_us: median.cpu_us_per_call, p99_ms: median.latency.p99_ms }
}

/// The figures of server `name` in the case `pick` finds, against the same case of `baseline`.
fn figures(
    results: &SuiteResults,
    name: &str,
    baseline: &str,
    pick: impl Fn(&ServerResults) -> Option<&LoadMedian>,
) -> Option<LoadFigures> {
    let ours = pick(results.server(name)?)?;
    Some(load_figures(ours, results.server(baseline).and_then(&pick)))
}

fn http_figures(results: &SuiteResults, name: &str, mode: Mode, clients: usize) -> Option<LoadFigures> {
    figures(results, name, HTTP_BASELINE, |r| {
        r.http.iter().find(|c| c.mode == mode && c.clients == clients).map(|c| &c.median)
    })
}

fn stdio_figures(results: &SuiteResults, name: &str, inflight: usize) -> Option<LoadFigures> {
    figures(results, name, PIPE_BASELINE, |r| r.stdio.iter().find(|c| c.inflight == inflight).map(|c| &c.median))
}

fn ratio(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.3}×")).unwrap_or_else(|| "—".into())
}

/// The "before and after" section for server `name`: every load case measured in both runs,
/// then memory per idle session and spawn to first call. Empty when `name` ran in neither.
pub fn markdown(before: &SuiteResults, after: &SuiteResults, name: &str) -> String {
    let (Some(_), Some(_)) = (before.server(name), after.server(name)) else { return String::new() };
    let mut md = String::new();
    let _ = writeln!(md, "## Before and after: `{name}` in this run and in the previous one\n");
    let _ = writeln!(
        md,
        "The previous run is the `results.json` this run replaced ({}); what changed in between is in \
         [PERFORMANCE.md](PERFORMANCE.md). Throughput is the ratio to the raw baseline of the same run.\n",
        before.machine.date_utc
    );
    let _ = writeln!(
        md,
        "| measurement | × baseline before | × baseline after | CPU µs/call before | after | p99 ms before | after |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    let mut row = |label: String, b: LoadFigures, a: LoadFigures| {
        let _ = writeln!(
            md,
            "| {label} | {} | {} | {} | {} | {} | {} |",
            ratio(b.vs_baseline),
            ratio(a.vs_baseline),
            fmt_opt(b.cpu_us),
            fmt_opt(a.cpu_us),
            fmt_opt(b.p99_ms),
            fmt_opt(a.p99_ms)
        );
    };
    for mode in [Mode::Sessions, Mode::Stateless] {
        for &clients in &after.settings.clients {
            if let (Some(b), Some(a)) =
                (http_figures(before, name, mode, clients), http_figures(after, name, mode, clients))
            {
                row(format!("HTTP {}, {clients} client{}", mode.as_str(), if clients == 1 { "" } else { "s" }), b, a);
            }
        }
    }
    for &inflight in &after.settings.inflight {
        if let (Some(b), Some(a)) = (stdio_figures(before, name, inflight), stdio_figures(after, name, inflight)) {
            row(format!("stdio, {inflight} in flight"), b, a);
        }
    }
    let memory = |r: &SuiteResults| {
        let server = r.server(name)?;
        server.memory.iter().max_by_key(|m| m.count).map(|m| (m.count, m.bytes_per_session))
    };
    if let (Some((nb, b)), Some((na, a))) = (memory(before), memory(after)) {
        let _ = writeln!(
            md,
            "\nMemory per idle session: {} B (N={nb}) before, {} B (N={na}) after.",
            fmt_opt(b),
            fmt_opt(a)
        );
    }
    let spawn = |r: &SuiteResults| r.server(name)?.spawn.as_ref().and_then(|s| s.median_ms);
    if let (Some(b), Some(a)) = (spawn(before), spawn(after)) {
        let _ = writeln!(
            md,
            "\nSpawn to first call (median): {} ms before, {} ms after.",
            fmt_opt(Some(b)),
            fmt_opt(Some(a))
        );
    }
    md.push('\n');
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineInfo;
    use crate::stats::LatencySummary;
    use crate::suite::{HttpCase, Settings};

    fn http_case(req_per_s: f64, cpu: f64, p99: f64) -> HttpCase {
        let latency = LatencySummary { p99_ms: Some(p99), ..Default::default() };
        let median =
            LoadMedian { req_per_s: Some(req_per_s), cpu_us_per_call: Some(cpu), latency, ..Default::default() };
        HttpCase { mode: Mode::Stateless, protocol: "2026-07-28".into(), clients: 64, runs: Vec::new(), median }
    }

    fn run(date: &str, ours: HttpCase, baseline: HttpCase) -> SuiteResults {
        let server =
            |name: &str, case: HttpCase| ServerResults { name: name.into(), http: vec![case], ..Default::default() };
        SuiteResults {
            machine: MachineInfo {
                cpu_model: String::new(),
                cores: 2,
                allowed_cpus: 2,
                kernel: String::new(),
                rustc: String::new(),
                date_utc: date.into(),
                pinning: String::new(),
                load_average: None,
            },
            settings: Settings {
                runs: 3,
                duration_s: 3.0,
                warmup_s: 1.0,
                clients: vec![64],
                session_counts: Vec::new(),
                inflight: Vec::new(),
                spawn_repeat: 0,
                smoke: false,
                command_line: String::new(),
            },
            servers: vec![server("mcp", ours), server(HTTP_BASELINE, baseline)],
            client: None,
            streams: None,
            streams_http2: None,
        }
    }

    #[test]
    fn throughput_is_compared_as_the_ratio_to_each_runs_own_baseline() {
        // The machine was faster in the second run: the baseline rose too, and only the
        // server's share of it tells whether the code changed.
        let before = run("then", http_case(70_000.0, 15.2, 1.5), http_case(100_000.0, 11.0, 1.0));
        let after = run("now", http_case(96_000.0, 12.5, 1.1), http_case(120_000.0, 10.0, 0.9));
        let md = markdown(&before, &after, "mcp");
        assert!(md.contains("(then)"), "{md}");
        assert!(md.contains("| HTTP stateless, 64 clients | 0.700× | 0.800× | 15.2 | 12.5 | 1.50 | 1.10 |"), "{md}");
        assert_eq!(markdown(&before, &after, "absent"), "");
    }
}
