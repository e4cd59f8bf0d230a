//! A real `redis-server` that a test starts itself, on a loopback port of its own, without
//! persistence, and stops when it is dropped; [`RedisServer::stop`] and
//! [`RedisServer::restart`] simulate losing Redis and getting it back (empty, as after a crash
//! of a server that keeps nothing on disk).
//!
//! ```no_run
//! let mut redis = mcpwire_testkit::redis::RedisServer::start();
//! let url = redis.url(); // redis://127.0.0.1:P, for the code under test
//! redis.stop(); // connections are refused now
//! redis.restart(); // the same port answers again, with no data
//! # let _ = url;
//! ```

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::child::{find_program, free_port, Running, READY_PAUSE, READY_TRIES, START_ATTEMPTS};

/// The one line a test fails with on a machine without Redis.
const NOT_INSTALLED: &str =
    "redis-server is not installed: scripts/test installs it (apt-get install redis-server), or install it by hand";

/// A `redis-server` child bound to 127.0.0.1 on a port of its own; killed and reaped when
/// dropped.
pub struct RedisServer {
    /// The program started (found once, on `PATH` or in an `sbin` directory).
    program: PathBuf,
    /// The port it listens on, kept across [`stop`](Self::stop) and
    /// [`restart`](Self::restart) so that clients reconnect to the same URL.
    port: u16,
    /// The running server; `None` while stopped.
    running: Option<Running>,
}

impl RedisServer {
    /// Starts a server on a free port and returns once it answers `PING`; panics if
    /// `redis-server` is not installed or does not answer within 5 s.
    pub fn start() -> RedisServer {
        let program = find_program("redis-server").unwrap_or_else(|| panic!("{NOT_INSTALLED}"));
        let mut failures = Vec::new();
        // The port found free may be taken before the server binds it; then it exits at once,
        // and another port is tried.
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            match launch(&program, port) {
                Ok(running) => return RedisServer { program, port, running: Some(running) },
                Err(why) => failures.push(format!("port {port}: {why}")),
            }
        }
        panic!("redis-server did not start in {START_ATTEMPTS} attempts:\n{}", failures.join("\n"));
    }

    /// `redis://127.0.0.1:P`, the URL of this server.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The port it listens on (the same after a [`restart`](Self::restart)).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server (SIGKILL, as a crash would) and waits for it to end: from then on a
    /// connection to [`url`](Self::url) is refused, and every connection it had is closed.
    /// Does nothing if it is stopped already.
    pub fn stop(&mut self) {
        // Dropping it kills and reaps it.
        self.running = None;
    }

    /// Starts the server again on the same port (stopping it first if it runs) and returns
    /// once it answers `PING`; it starts empty, since nothing is persisted. Panics if it does
    /// not come back (say, the port was taken meanwhile).
    pub fn restart(&mut self) {
        self.stop();
        let mut failures = Vec::new();
        // The port was ours a moment ago, so a failure here is rare: a connection of ours in
        // a state the kernel still holds, or another process quicker than us. Retry a few times.
        for _ in 0..START_ATTEMPTS {
            match launch(&self.program, self.port) {
                Ok(running) => {
                    self.running = Some(running);
                    return;
                }
                Err(why) => {
                    failures.push(why);
                    std::thread::sleep(READY_PAUSE);
                }
            }
        }
        panic!("redis-server did not restart on port {}:\n{}", self.port, failures.join("\n"));
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts `redis-server` on `port` and waits until it answers `PING`; `Err` tells why not
/// (with what it printed), after killing it.
fn launch(program: &Path, port: u16) -> Result<Running, String> {
    let mut command = Command::new(program);
    command.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
    // Nothing on disk (no snapshot, no append-only file): a restart gives an empty server,
    // and no test leaves files behind. Protected mode stays on: loopback clients need no
    // password, anything else is refused.
    command.args(["--save", "", "--appendonly", "no", "--protected-mode", "yes"]);
    command.args(["--daemonize", "no", "--loglevel", "warning"]);
    let mut running = match Running::spawn(&mut command) {
        Ok(running) => running,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{NOT_INSTALLED}"),
        Err(e) => return Err(format!("cannot start {}: {e}", program.display())),
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    for _ in 0..READY_TRIES {
        if let Some(status) = running.exited() {
            return Err(format!("redis-server exited ({status}):\n{}", running.output()));
        }
        // Another process may answer on a port we just found free; only our child's answer
        // counts, hence the check that it still runs after the answer too.
        if ping(addr) && running.exited().is_none() {
            return Ok(running);
        }
        std::thread::sleep(READY_PAUSE);
    }
    Err(format!("redis-server did not answer PING on {addr} within 5 s:\n{}", running.output()))
}

/// Whether a Redis server at `addr` answers `PING` with `+PONG` (inline command, raw TCP).
fn ping(addr: SocketAddr) -> bool {
    let attempt = || -> std::io::Result<bool> {
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
        stream.set_read_timeout(Some(Duration::from_secs(1)))?;
        stream.write_all(b"PING\r\n")?;
        let mut answer = [0u8; 7];
        stream.read_exact(&mut answer)?;
        Ok(answer == *b"+PONG\r\n")
    };
    attempt().unwrap_or(false)
}
