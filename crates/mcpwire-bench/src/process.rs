//! Server processes: spawning (pinned to a core, in their own process group), waiting for a
//! port, stopping (SIGTERM, then SIGKILL), CPU affinity and free ports.

use anyhow::{bail, Context as _, Result};
use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// The CPUs this process may run on (`sched_getaffinity`), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

fn set_affinity(pid: libc::pid_t, cpu: usize) -> std::io::Result<()> {
    // SAFETY: the set is a zeroed cpu_set_t with one bit set; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Pins the calling thread (and every thread it creates later) to `cpu`.
pub fn pin_current_thread(cpu: usize) -> Result<()> {
    set_affinity(0, cpu).with_context(|| format!("cannot pin the load generator to CPU {cpu}"))
}

/// Which CPUs a suite uses: the server's and the load generator's, or `None` when fewer
/// than two CPUs are available (then nothing is pinned).
pub fn pinning_plan() -> Option<(usize, usize)> {
    let cpus = allowed_cpus();
    (cpus.len() >= 2).then(|| (cpus[0], cpus[1]))
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("cannot bind 127.0.0.1:0 to find a free port")?;
    Ok(l.local_addr()?.port())
}

/// How a server is started.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// Working directory (commands are relative to it).
    pub cwd: Option<PathBuf>,
    /// The CPU to pin the server to (like `taskset -c CPU`).
    pub cpu: Option<usize>,
    /// Pipe stdin and stdout to us (stdio servers); otherwise they go to the log or nowhere.
    pub piped: bool,
    /// File that receives the server's stderr (and stdout when not piped).
    pub log: Option<PathBuf>,
}

/// A running server: a child in its own process group.
pub struct ServerProcess {
    /// The child process.
    pub child: Child,
    /// Its process id (also its process group id).
    pub pid: u32,
    /// Where its output goes, for error messages.
    pub log: Option<PathBuf>,
}

/// Starts `argv` as a server.
pub fn spawn(argv: &[String], opts: &SpawnOptions) -> Result<ServerProcess> {
    let (program, args) = argv.split_first().context("empty server command")?;
    let mut cmd = Command::new(program);
    cmd.args(args).kill_on_drop(true).process_group(0);
    if let Some(dir) = &opts.cwd {
        cmd.current_dir(dir);
    }
    let log = match &opts.log {
        Some(path) => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).ok();
            }
            Some(File::create(path).with_context(|| format!("cannot create {}", path.display()))?)
        }
        None => None,
    };
    let to_log = |log: &Option<File>| -> Result<Stdio> {
        Ok(match log {
            Some(f) => Stdio::from(f.try_clone()?),
            None => Stdio::null(),
        })
    };
    cmd.stderr(to_log(&log)?);
    if opts.piped {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    } else {
        cmd.stdin(Stdio::null()).stdout(to_log(&log)?);
    }
    if let Some(cpu) = opts.cpu {
        // SAFETY: only sched_setaffinity (a raw syscall, async-signal-safe) runs in the child.
        unsafe {
            cmd.pre_exec(move || set_affinity(0, cpu));
        }
    }
    let child = cmd.spawn().with_context(|| format!("cannot start {}", shell_words(argv)))?;
    let pid = child.id().context("the server exited at once")?;
    Ok(ServerProcess { child, pid, log: opts.log.clone() })
}

impl ServerProcess {
    /// Waits until `addr` accepts TCP connections, for at most `timeout`; fails early when
    /// the server exits.
    pub async fn wait_for_port(&mut self, addr: SocketAddr, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("the server exited ({status}) before listening on {addr}{}", self.log_hint());
            }
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!("the server did not listen on {addr} within {timeout:?}{}", self.log_hint());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `; see LOG` when there is a log file.
    pub fn log_hint(&self) -> String {
        self.log.as_ref().map(|l| format!(" (its output: {})", l.display())).unwrap_or_default()
    }

    /// Stops the whole process group: SIGTERM, then SIGKILL after 3 s.
    pub async fn stop(mut self) {
        let pgid = self.pid as libc::pid_t;
        // SAFETY: signalling our own child's process group.
        unsafe {
            libc::kill(-pgid, libc::SIGTERM);
        }
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait()).await.is_err() {
            // SAFETY: as above.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
            let _ = self.child.wait().await;
        }
        // Leftover group members (a wrapper's children) get SIGKILL too.
        // SAFETY: as above; ESRCH when the group is empty is fine.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: signalling our own child's process group.
            unsafe {
                libc::kill(-(self.pid as libc::pid_t), libc::SIGKILL);
            }
        }
    }
}

/// `argv` as one shell-quoted line, for messages and documentation.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:{}=,@+".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `program` can be run: a path (relative to `root`) that exists, or a name found in
/// `PATH`.
pub fn program_exists(program: &str, root: &Path) -> bool {
    if program.contains('/') {
        return root.join(program).exists();
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let argv: Vec<String> = ["target/release/mcp", "serve", "--http", "127.0.0.1:{port}", "a b"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(shell_words(&argv), "target/release/mcp serve --http 127.0.0.1:{port} 'a b'");
    }

    #[test]
    fn programs() {
        assert!(program_exists("sh", Path::new("/")));
        assert!(!program_exists("surely-not-a-program-xyz", Path::new("/")));
        assert!(program_exists("bin/sh", Path::new("/")));
        assert!(!allowed_cpus().is_empty());
    }
}
