//! A real haproxy in front of HTTP backends, on loopback: round robin with no affinity at all
//! (no stickiness, no cookies), so that consecutive requests of one client, even on one
//! connection, reach different backends; a backend that dies is skipped at once (the refused
//! connection is retried on another) and taken out within a fraction of a second, and a
//! backend that comes back is taken in again. It is what a test needs to show that servers
//! sharing their state (in Redis) serve any request of a session, and that a rolling restart
//! loses no call.
//!
//! ```no_run
//! # let (a, b): (std::net::SocketAddr, std::net::SocketAddr) = todo!();
//! let proxy = mcpwire_testkit::haproxy::Haproxy::start(&[a, b]);
//! let endpoint = proxy.url("/mcp"); // http://127.0.0.1:P/mcp, balanced over a and b
//! # let _ = endpoint;
//! ```

use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::child::{accepts, find_program, free_port, Running, READY_PAUSE, READY_TRIES, START_ATTEMPTS};

/// The one line a test fails with on a machine without haproxy.
const NOT_INSTALLED: &str = "haproxy is not installed: scripts/test installs it (apt-get install haproxy)";

/// A haproxy child balancing HTTP over the backends it was given; killed and reaped when
/// dropped, its temporary directory removed.
pub struct Haproxy {
    /// The frontend's address, 127.0.0.1:P.
    addr: SocketAddr,
    /// The running proxy (dropped before the directory is removed).
    running: Option<Running>,
    /// The directory holding its configuration, ours alone.
    dir: PathBuf,
}

impl Haproxy {
    /// Starts haproxy on a free loopback port, balancing over `backends` (HTTP servers), and
    /// returns once its frontend accepts connections; panics if haproxy is not installed or
    /// does not start within 5 s.
    pub fn start(backends: &[SocketAddr]) -> Haproxy {
        assert!(!backends.is_empty(), "haproxy needs at least one backend");
        let program = find_program("haproxy").unwrap_or_else(|| panic!("{NOT_INSTALLED}"));
        let dir = fresh_dir();
        let mut failures = Vec::new();
        // The port found free may be taken before haproxy binds it; then it exits at once
        // ("cannot bind socket"), and another port is tried.
        for _ in 0..START_ATTEMPTS {
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, free_port()));
            match launch(&program, &dir, addr, backends) {
                Ok(running) => return Haproxy { addr, running: Some(running), dir },
                Err(why) => failures.push(why),
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        panic!("haproxy did not start in {START_ATTEMPTS} attempts:\n{}", failures.join("\n"));
    }

    /// The frontend's address (127.0.0.1 and its port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:P{path}`: `path` (say `/mcp`) on the frontend.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        // Kill and reap it first, then remove what it read.
        self.running = None;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new empty directory under the system's temporary directory, named uniquely (process,
/// counter, time) so that tests running at once never share one.
fn fresh_dir() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name = format!("mcp-testkit-haproxy-{}-{}-{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let dir = std::env::temp_dir().join(name);
    std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// The configuration: one frontend on `addr`, one backend over `backends`.
fn config(addr: SocketAddr, backends: &[SocketAddr]) -> String {
    // `option http-server-close` rather than server-side keep-alive (haproxy's default) or
    // `http-reuse never`: the client side stays keep-alive, and every request opens its own
    // connection to the backend chosen for it. So (1) each request is balanced on its own,
    // round robin, even on one client connection (the default would balance per request
    // too, but reuse idle backend connections); and (2) a dead backend shows up as a refused
    // connection, which `retries` + `option redispatch` send to another backend, rather than
    // as a failure on a reused idle connection, which haproxy cannot retry for a request
    // that is not idempotent (an MCP POST). This is what lets a rolling restart lose no call.
    //
    // `option redispatch 1` lets every retry go to another backend, not only the last one
    // (plain `option redispatch`). Without redispatch, haproxy retries the dead backend itself,
    // a second apart, and answers 503 (measured with haproxy 2.6: 3 s, then 503).
    //
    // Timeouts of 60 s for client, server and tunnel: an SSE stream is a response that may
    // stay silent for long; 60 s is longer than any test keeps one idle.
    //
    // Health checks are plain TCP connects (`check`, no `option httpchk`): our servers need
    // not have a health endpoint. Every 200 ms, one failure takes a backend out and one
    // success brings it back, so a killed backend leaves quickly and a restarted one returns.
    let mut cfg = String::from(
        "global\n\
         \x20   maxconn 4096\n\
         \n\
         defaults\n\
         \x20   mode http\n\
         \x20   timeout connect 2s\n\
         \x20   timeout client 60s\n\
         \x20   timeout server 60s\n\
         \x20   timeout tunnel 60s\n\
         \x20   option http-server-close\n\
         \x20   option redispatch 1\n\
         \x20   retries 3\n\
         \n",
    );
    let _ = write!(cfg, "frontend mcp\n    bind {addr}\n    default_backend servers\n\n");
    cfg.push_str("backend servers\n    balance roundrobin\n");
    for (i, backend) in backends.iter().enumerate() {
        let _ = writeln!(cfg, "    server s{i} {backend} check inter 200ms fall 1 rise 1");
    }
    cfg
}

/// Writes the configuration for `addr` into `dir`, starts haproxy on it in the foreground, and
/// waits until the frontend accepts connections; `Err` tells why not (with what it printed),
/// after killing it.
fn launch(program: &Path, dir: &Path, addr: SocketAddr, backends: &[SocketAddr]) -> Result<Running, String> {
    let cfg = dir.join("haproxy.cfg");
    std::fs::write(&cfg, config(addr, backends)).unwrap_or_else(|e| panic!("cannot write {}: {e}", cfg.display()));
    // -db: foreground, no daemon, so that the child we hold is haproxy itself.
    let mut command = Command::new(program);
    command.arg("-f").arg(&cfg).arg("-db").current_dir(dir);
    let mut running = match Running::spawn(&mut command) {
        Ok(running) => running,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{NOT_INSTALLED}"),
        Err(e) => return Err(format!("cannot start {}: {e}", program.display())),
    };
    for _ in 0..READY_TRIES {
        if let Some(status) = running.exited() {
            return Err(format!("haproxy on {addr} exited ({status}):\n{}", running.output()));
        }
        if accepts(addr) && running.exited().is_none() {
            return Ok(running);
        }
        std::thread::sleep(READY_PAUSE);
    }
    Err(format!("haproxy did not accept connections on {addr} within 5 s:\n{}", running.output()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_balances_every_backend_with_checks() {
        let a: SocketAddr = "127.0.0.1:1001".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:1002".parse().unwrap();
        let cfg = config("127.0.0.1:2000".parse().unwrap(), &[a, b]);
        assert!(cfg.contains("    bind 127.0.0.1:2000\n"), "{cfg}");
        assert!(cfg.contains("    balance roundrobin\n"), "{cfg}");
        assert!(cfg.contains("    server s0 127.0.0.1:1001 check inter 200ms fall 1 rise 1\n"), "{cfg}");
        assert!(cfg.contains("    server s1 127.0.0.1:1002 check inter 200ms fall 1 rise 1\n"), "{cfg}");
        assert!(!cfg.contains("cookie") && !cfg.contains("stick"), "no affinity: {cfg}");
    }
}
