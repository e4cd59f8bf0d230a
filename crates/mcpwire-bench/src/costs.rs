//! Costs measured in the same run (issue 30): what a feature costs, as the ratio between two
//! servers of the suite that differ by that feature alone, on the same case (mode, clients or
//! calls in flight) of the same run: the `#[tool]` echo against the hand-written one, the
//! echo with `TracingLayer` against the one without, and the gateway (`mcp proxy --config` in
//! front of `mcp serve` over stdio) against `mcp serve` answering itself. The servers are
//! measured in the same interleaved rounds, so the machine's drift falls on both sides of a
//! ratio; the gateway's CPU is that of its whole process tree (front and upstream together).

use crate::http_load::Mode;
use crate::report::OUR_SERVER;
use crate::suite::{fmt_num, fmt_opt, LoadMedian, SuiteResults};
use std::fmt::Write as _;

/// The typed echo server's name in the servers file.
pub const TYPED_ECHO: &str = "mcp-typed-echo";
/// The raw (hand-written schema, closure) echo server's name.
pub const RAW_ECHO: &str = "mcp-raw-echo";
/// The typed echo with `TracingLayer`.
pub const TRACED_ECHO: &str = "mcp-typed-echo-traced";
/// The gateway in front of `mcp serve`.
pub const GATEWAY: &str = "mcp-gateway";

/// The servers the cost rows need (the smoke run measures them too).
pub const SERVERS: [&str; 5] = [OUR_SERVER, TYPED_ECHO, RAW_ECHO, TRACED_ECHO, GATEWAY];

/// A goal for one comparison: every bound given must hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goal {
    /// Calls per second of the server over those of the one it is compared with, at least.
    pub min_ratio: f64,
    /// CPU per call of the server over that of the other, at most.
    pub max_cpu_ratio: Option<f64>,
    /// CPU per call of the server minus that of the other, µs, at most.
    pub max_extra_cpu_us: Option<f64>,
}

impl Goal {
    /// The goal in words, for the table.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("calls/s ≥ {}×", fmt_num(self.min_ratio))];
        if let Some(r) = self.max_cpu_ratio {
            parts.push(format!("CPU/call ≤ {}×", fmt_num(r)));
        }
        if let Some(us) = self.max_extra_cpu_us {
            parts.push(format!("CPU/call ≤ +{} µs", fmt_num(us)));
        }
        parts.join(", ")
    }

    /// Whether the figures meet it (`None` when a figure it needs is missing).
    pub fn met(&self, ratio: Option<f64>, cpu_ratio: Option<f64>, extra_cpu_us: Option<f64>) -> Option<bool> {
        let mut met = ratio? >= self.min_ratio;
        if let Some(max) = self.max_cpu_ratio {
            met &= cpu_ratio? <= max;
        }
        if let Some(max) = self.max_extra_cpu_us {
            met &= extra_cpu_us? <= max;
        }
        Some(met)
    }
}

/// One cost: a server against the server it differs from by one feature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// What is compared, e.g. `typed vs raw echo`.
    pub name: &'static str,
    /// The server with the feature.
    pub server: &'static str,
    /// The server without it.
    pub against: &'static str,
    /// The goal (issue 30).
    pub goal: Goal,
}

/// The costs the report states, in its order.
pub const COMPARISONS: [Comparison; 3] = [
    Comparison {
        name: "typed vs raw echo",
        server: TYPED_ECHO,
        against: RAW_ECHO,
        goal: Goal { min_ratio: 0.95, max_cpu_ratio: None, max_extra_cpu_us: None },
    },
    Comparison {
        name: "tracing layer on vs off",
        server: TRACED_ECHO,
        against: TYPED_ECHO,
        goal: Goal { min_ratio: 0.95, max_cpu_ratio: Some(1.05), max_extra_cpu_us: None },
    },
    Comparison {
        name: "gateway vs direct",
        server: GATEWAY,
        against: OUR_SERVER,
        goal: Goal { min_ratio: 0.5, max_cpu_ratio: None, max_extra_cpu_us: Some(20.0) },
    },
];

/// One row: a comparison on one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    /// The comparison.
    pub comparison: Comparison,
    /// The case, e.g. `HTTP stateless, 16 clients`.
    pub case: String,
    /// The medians of the server with the feature.
    pub server: LoadMedian,
    /// The medians of the server without it.
    pub against: LoadMedian,
    /// Calls per second, server over against.
    pub ratio: Option<f64>,
    /// CPU per call, server over against.
    pub cpu_ratio: Option<f64>,
    /// CPU per call, server minus against, µs.
    pub extra_cpu_us: Option<f64>,
    /// Whether the goal is met.
    pub met: Option<bool>,
}

fn quotient(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => Some(a / b),
        _ => None,
    }
}

fn row(comparison: Comparison, case: String, server: &LoadMedian, against: &LoadMedian) -> CostRow {
    let ratio = quotient(server.req_per_s, against.req_per_s);
    let cpu_ratio = quotient(server.cpu_us_per_call, against.cpu_us_per_call);
    let extra_cpu_us = server.cpu_us_per_call.zip(against.cpu_us_per_call).map(|(a, b)| a - b);
    CostRow {
        comparison,
        case,
        server: server.clone(),
        against: against.clone(),
        ratio,
        cpu_ratio,
        extra_cpu_us,
        met: comparison.goal.met(ratio, cpu_ratio, extra_cpu_us),
    }
}

/// Every row the results allow: each comparison whose two servers ran, on each case both
/// measured (HTTP sessions and stateless at each client count, then stdio at each number of
/// calls in flight).
pub fn rows(results: &SuiteResults) -> Vec<CostRow> {
    let mut rows = Vec::new();
    for comparison in COMPARISONS {
        let (Some(server), Some(against)) = (results.server(comparison.server), results.server(comparison.against))
        else {
            continue;
        };
        for mode in [Mode::Sessions, Mode::Stateless] {
            for &clients in &results.settings.clients {
                let case = |r: &crate::suite::ServerResults| {
                    r.http.iter().find(|c| c.mode == mode && c.clients == clients).map(|c| c.median.clone())
                };
                if let (Some(a), Some(b)) = (case(server), case(against)) {
                    let label =
                        format!("HTTP {}, {clients} client{}", mode.as_str(), if clients == 1 { "" } else { "s" });
                    rows.push(row(comparison, label, &a, &b));
                }
            }
        }
        for &inflight in &results.settings.inflight {
            let case = |r: &crate::suite::ServerResults| {
                r.stdio.iter().find(|c| c.inflight == inflight).map(|c| c.median.clone())
            };
            if let (Some(a), Some(b)) = (case(server), case(against)) {
                rows.push(row(comparison, format!("stdio, {inflight} in flight"), &a, &b));
            }
        }
    }
    rows
}

/// The section of the report (empty when no comparison could be made).
pub fn markdown(results: &SuiteResults) -> String {
    let rows = rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::new();
    let _ = writeln!(md, "## Costs measured in the same run\n");
    let _ = writeln!(
        md,
        "What a feature costs, as the ratio between two servers of this run that differ by it alone, on the same \
         case (their medians, measured in the same interleaved rounds): `{TYPED_ECHO}` over `{RAW_ECHO}`, \
         `{TRACED_ECHO}` over `{TYPED_ECHO}`, and `{GATEWAY}` (`mcp proxy --config` in front of `mcp serve` over \
         stdio, `bench/gateway.sh`) over `{OUR_SERVER}` (`mcp serve --http` answering itself). **×** is calls/s of \
         the first over the second; CPU is µs per call, the first's then the second's; the gateway's is its whole \
         process tree, front and upstream together. Goals from issue 30, set for loaded cases (the gateway's and \
         the tracing layer's at 16 stateless clients, as `bench/middleware.sh` measures them): at 1 client every \
         call wakes each process from idle, and the gateway has two. Only these rows: `target/release/mcpwire-bench \
         suite --only {} --out target/bench-costs --docs target/bench-costs`.\n",
        SERVERS.join(",")
    );
    let _ = writeln!(md, "| cost | case | calls/s | × | CPU µs/call | CPU Δ µs | CPU × | errors | goal | met |");
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---|---|");
    for r in &rows {
        let c = &r.comparison;
        let _ = writeln!(
            md,
            "| {} (`{}` / `{}`) | {} | {} / {} | {} | {} / {} | {} | {} | {} | {} | {} |",
            c.name,
            c.server,
            c.against,
            r.case,
            fmt_opt(r.server.req_per_s),
            fmt_opt(r.against.req_per_s),
            r.ratio.map(|x| format!("{}×", fmt_num(x))).unwrap_or_else(|| "—".into()),
            fmt_opt(r.server.cpu_us_per_call),
            fmt_opt(r.against.cpu_us_per_call),
            r.extra_cpu_us.map(|d| format!("{}{}", if d >= 0.0 { "+" } else { "" }, fmt_num(d))).unwrap_or("—".into()),
            r.cpu_ratio.map(|x| format!("{}×", fmt_num(x))).unwrap_or_else(|| "—".into()),
            r.server.errors + r.against.errors,
            c.goal.describe(),
            match r.met {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            }
        );
    }
    md.push('\n');
    for c in COMPARISONS {
        let of: Vec<&CostRow> = rows.iter().filter(|r| r.comparison.name == c.name).collect();
        if of.is_empty() {
            continue;
        }
        let met = of.iter().filter(|r| r.met == Some(true)).count();
        let _ = writeln!(md, "- {}: goal ({}) met in {met} of {} cases.", c.name, c.goal.describe(), of.len());
    }
    md.push('\n');
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{HttpCase, ServerResults, Settings, StdioCase};

    fn median(req_per_s: f64, cpu: f64) -> LoadMedian {
        LoadMedian { req_per_s: Some(req_per_s), cpu_us_per_call: Some(cpu), calls: 10, ..Default::default() }
    }

    fn server(name: &str, stateless: Option<(f64, f64)>, stdio: Option<(f64, f64)>) -> ServerResults {
        let http = stateless
            .map(|(r, c)| HttpCase {
                mode: Mode::Stateless,
                protocol: "2026-07-28".into(),
                clients: 16,
                runs: Vec::new(),
                median: median(r, c),
            })
            .into_iter()
            .collect();
        let stdio =
            stdio.map(|(r, c)| StdioCase { inflight: 1, runs: Vec::new(), median: median(r, c) }).into_iter().collect();
        ServerResults { name: name.into(), http, stdio, ..Default::default() }
    }

    fn results(servers: Vec<ServerResults>) -> SuiteResults {
        SuiteResults {
            machine: crate::machine::MachineInfo {
                cpu_model: String::new(),
                cores: 2,
                allowed_cpus: 2,
                kernel: String::new(),
                rustc: String::new(),
                date_utc: String::new(),
                pinning: String::new(),
                load_average: None,
            },
            settings: Settings {
                runs: 1,
                duration_s: 1.0,
                warmup_s: 0.0,
                clients: vec![16],
                session_counts: Vec::new(),
                inflight: vec![1],
                spawn_repeat: 0,
                smoke: true,
                command_line: String::new(),
            },
            servers,
            client: None,
            streams: None,
            streams_http2: None,
        }
    }

    #[test]
    fn goals() {
        let gateway = COMPARISONS[2].goal;
        assert_eq!(gateway.describe(), "calls/s ≥ 0.500×, CPU/call ≤ +20.0 µs");
        assert_eq!(gateway.met(Some(0.6), None, Some(19.0)), Some(true));
        assert_eq!(gateway.met(Some(0.6), None, Some(21.0)), Some(false));
        assert_eq!(gateway.met(Some(0.4), None, Some(1.0)), Some(false));
        assert_eq!(gateway.met(Some(0.6), None, None), None);
        let tracing = COMPARISONS[1].goal;
        assert_eq!(tracing.met(Some(0.97), Some(1.04), None), Some(true));
        assert_eq!(tracing.met(Some(0.97), Some(1.06), None), Some(false));
    }

    #[test]
    fn rows_pair_the_cases_both_servers_measured() {
        let r = results(vec![
            server(OUR_SERVER, Some((80_000.0, 12.0)), Some((17_000.0, 23.0))),
            server(TYPED_ECHO, Some((60_000.0, 15.0)), Some((16_000.0, 24.0))),
            server(RAW_ECHO, Some((62_000.0, 14.8)), None),
            server(TRACED_ECHO, Some((58_000.0, 15.5)), Some((15_000.0, 25.0))),
            server(GATEWAY, Some((36_000.0, 31.0)), None),
        ]);
        let rows = rows(&r);
        let found: Vec<(&str, &str)> = rows.iter().map(|r| (r.comparison.name, r.case.as_str())).collect();
        assert_eq!(
            found,
            [
                ("typed vs raw echo", "HTTP stateless, 16 clients"),
                ("tracing layer on vs off", "HTTP stateless, 16 clients"),
                ("tracing layer on vs off", "stdio, 1 in flight"),
                ("gateway vs direct", "HTTP stateless, 16 clients"),
            ]
        );
        let gateway = &rows[3];
        assert_eq!(gateway.ratio, Some(0.45));
        assert_eq!(gateway.extra_cpu_us, Some(19.0));
        assert_eq!(gateway.met, Some(false));
        assert_eq!(rows[0].met, Some(true));
        let md = markdown(&r);
        assert!(md.contains("## Costs measured in the same run"), "{md}");
        assert!(
            md.contains(
                "| gateway vs direct (`mcp-gateway` / `mcp`) | HTTP stateless, 16 clients | 36000 / 80000 | 0.450× | \
                 31.0 / 12.0 | +19.0 | 2.58× | 0 | calls/s ≥ 0.500×, CPU/call ≤ +20.0 µs | **no** |"
            ),
            "{md}"
        );
        assert!(
            md.contains("- tracing layer on vs off: goal (calls/s ≥ 0.950×, CPU/call ≤ 1.05×) met in 1 of 2 cases.")
        );
        // Without the servers a comparison needs, no row and no section.
        assert!(markdown(&results(vec![server(OUR_SERVER, Some((1.0, 1.0)), None)])).is_empty());
    }
}
