//! What the end-to-end tests against servers published on npm share (`cli_everything`,
//! `cli_filesystem`): the opt-in (`MCP_E2E_NPM`), and running the real `mcp` binary with every
//! wait bounded.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::process::Command;
use std::time::Duration;

use mcpwire_testkit::output_within;

/// The longest any one command may take (the first run downloads the package).
pub const DEADLINE: Duration = Duration::from_secs(180);

/// The npm package spec to run: `$override_var` if set, else `pinned`; `None` (with the reason
/// printed) when `MCP_E2E_NPM` is not set, so that the test is skipped.
pub fn npm_spec(override_var: &str, pinned: &str) -> Option<String> {
    if std::env::var_os("MCP_E2E_NPM").is_none() {
        eprintln!("skipped: set MCP_E2E_NPM=1 to run the end-to-end tests against {pinned} (needs npx)");
        return None;
    }
    Some(std::env::var(override_var).unwrap_or_else(|_| pinned.to_owned()))
}

/// How an `mcp` command ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `mcp ARGS` to its end (bounded by [`DEADLINE`]), whatever its exit code.
pub fn run_any(args: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    // The first run may download the package: give the handshake time.
    command.args(args).args(["--timeout", "120"]).env_remove("MCP_CONFIG");
    let output = output_within(&mut command, DEADLINE, format!("`mcp {}` finished", args.join(" ")));
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `mcp ARGS` and asserts that it succeeded.
pub fn run(args: &[&str]) -> Run {
    let run = run_any(args);
    assert!(
        run.code == 0,
        "`mcp {}` exited {}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        run.code,
        run.stdout,
        run.stderr
    );
    run
}

/// Asserts that `mcp` failed with exit `code`, printed nothing on stdout, and said why in one
/// line on stderr (`mcp: …`, containing `says`), and nothing else there.
pub fn assert_fails(run: &Run, code: i32, says: &str) {
    assert_eq!(run.code, code, "--- stdout\n{}\n--- stderr\n{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(lines.len() == 1 && lines[0].starts_with("mcp: ") && lines[0].contains(says), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}
