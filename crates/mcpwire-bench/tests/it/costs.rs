//! `mcpwire-bench suite --smoke` on the servers of the same-run costs (`bench/servers.toml`,
//! the workspace's binaries): every row of "Costs measured in the same run" is produced from
//! calls that were answered. Nothing here depends on how fast they were.

use mcpwire_bench::costs;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcpwire-bench");

#[test]
fn smoke_suite_states_every_cost_from_answered_calls() {
    let bin_dir = Path::new(BIN).parent().expect("the binary's directory");
    if !bin_dir.join("mcp").is_file() {
        eprintln!("skipped: no {} (build the workspace's binaries)", bin_dir.join("mcp").display());
        return;
    }
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let out = bin_dir.parent().expect("the target directory").join("bench-costs-test");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // The servers file as the suite's CI step uses it: the binaries of this build.
    let servers = std::fs::read_to_string(root.join("bench/servers.toml")).unwrap();
    let config = out.join("servers.toml");
    std::fs::write(&config, servers.replace("target/release/", &format!("{}/", bin_dir.display()))).unwrap();
    let only = costs::SERVERS.join(",");
    let run = Command::new(BIN)
        .args(["suite", "--smoke", "--duration", "0.3", "--warmup", "0.1", "--only", &only])
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .current_dir(root)
        .output()
        .expect("run mcpwire-bench suite");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "suite failed: {stderr}");

    let results = mcpwire_bench::suite::read_results(&out.join("results.json")).unwrap();
    for name in costs::SERVERS {
        let server = results.server(name).unwrap_or_else(|| panic!("{name} did not run: {stderr}"));
        assert!(server.errors.is_empty(), "{name}: {:?}", server.errors);
        let medians = server.http.iter().map(|c| &c.median).chain(server.stdio.iter().map(|c| &c.median));
        for m in medians {
            assert!(m.calls > 0 && m.errors == 0, "{name}: {m:?}");
        }
    }
    let rows = costs::rows(&results);
    // Sessions and stateless at 1 and 16 clients, and stdio at 1 and 64 in flight where both
    // servers serve it (the gateway is HTTP only).
    for (comparison, cases) in [("typed vs raw echo", 6), ("tracing layer on vs off", 6), ("gateway vs direct", 4)] {
        let of: Vec<_> = rows.iter().filter(|r| r.comparison.name == comparison).collect();
        assert_eq!(of.len(), cases, "{comparison}: {of:?}");
        for r in of {
            assert!(r.server.calls > 0 && r.against.calls > 0, "{comparison}, {}: {r:?}", r.case);
            assert!(r.server.errors == 0 && r.against.errors == 0, "{comparison}, {}: {r:?}", r.case);
            let ratio = r.ratio.unwrap_or_else(|| panic!("{comparison}, {}: no ratio", r.case));
            assert!(ratio.is_finite() && ratio > 0.0, "{comparison}, {}: {ratio}", r.case);
            assert!(r.extra_cpu_us.is_some_and(f64::is_finite), "{comparison}, {}: no CPU figure: {r:?}", r.case);
            assert!(r.met.is_some(), "{comparison}, {}: {r:?}", r.case);
        }
    }
    let report = std::fs::read_to_string(out.join("BENCHMARKS.md")).unwrap();
    assert!(report.contains("## Costs measured in the same run"), "{report}");
    for c in costs::COMPARISONS {
        assert!(report.contains(&format!("| {} (`{}` / `{}`) |", c.name, c.server, c.against)), "{report}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
