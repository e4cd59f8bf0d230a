//! What [`RedisServer`](crate::redis::RedisServer) and [`Haproxy`](crate::haproxy::Haproxy)
//! share: finding a program, choosing a free loopback port, and a child process whose output
//! is kept (to tell why it failed) and which is killed and reaped when dropped.

use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How many bytes of a child's output are kept: the end of it, where the reason it stopped is.
const KEPT_OUTPUT: usize = 16 * 1024;

/// How many times a server is started on a fresh port when the one chosen was taken between
/// the moment it was found free and the moment the server bound it.
pub(crate) const START_ATTEMPTS: usize = 5;
/// How many times readiness is checked, [`READY_PAUSE`] apart: 5 s in all, far more than a
/// local server takes to listen, and short enough that a broken one fails the test quickly.
pub(crate) const READY_TRIES: usize = 200;
/// The pause between two readiness checks (a real sleep: we wait for a real process).
pub(crate) const READY_PAUSE: Duration = Duration::from_millis(25);

/// Where `name` is: on `PATH`, or else in the `sbin` directories that a non-root `PATH` often
/// lacks (Debian installs haproxy as /usr/sbin/haproxy).
pub(crate) fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A loopback port free at this moment: the OS chooses it for a listener that is dropped at
/// once. Another process may take it before our server binds it, hence [`START_ATTEMPTS`].
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0 to find a free port");
    listener.local_addr().expect("the address of a bound listener").port()
}

/// Whether something accepts TCP connections at `addr` now.
pub(crate) fn accepts(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

/// A running child process, its stdout and stderr read on threads into one buffer (so that a
/// chatty child never blocks on a full pipe, and a failure can show what it said); killed and
/// reaped when dropped.
pub(crate) struct Running {
    /// The process.
    child: std::process::Child,
    /// The end of what it wrote on stdout and stderr, interleaved, by two threads that end
    /// when the pipes close (not joined: a grandchild holding a pipe must not hang a drop).
    output: Arc<Mutex<Vec<u8>>>,
}

impl Running {
    /// Starts `command` with stdin empty and its output kept; `Err` carries the spawn error.
    pub(crate) fn spawn(command: &mut Command) -> std::io::Result<Running> {
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let output = Arc::new(Mutex::new(Vec::new()));
        let pipes: [Option<Box<dyn Read + Send>>; 2] = [
            child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
            child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
        ];
        for mut pipe in pipes.into_iter().flatten() {
            let output = Arc::clone(&output);
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                    let mut kept = output.lock().unwrap_or_else(|e| e.into_inner());
                    kept.extend_from_slice(&chunk[..n]);
                    if kept.len() > KEPT_OUTPUT {
                        let excess = kept.len() - KEPT_OUTPUT;
                        kept.drain(..excess);
                    }
                }
            });
        }
        Ok(Running { child, output })
    }

    /// `Some(description)` if the process has ended (say, because its port was taken).
    pub(crate) fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot be waited for: {e}")),
        }
    }

    /// What it has written so far (the end of it), for a failure message.
    pub(crate) fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // SIGKILL: what a crash or a lost machine looks like, and it cannot be ignored.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
