//! Reading a server's CPU time and memory from `/proc` (Linux).
//!
//! A server is measured as a process tree: the process itself (all its threads), plus every
//! live descendant, so that wrappers (`npx`, shell scripts) are counted with what they run.
//! CPU time is `utime + stime + cutime + cstime` (fields 14–17 of `/proc/PID/stat`) of each
//! process of the tree; memory is the sum of their `VmRSS`.

use anyhow::{anyhow, Context as _, Result};
use std::collections::HashMap;
use std::time::Duration;

/// The fields of `/proc/PID/stat` the harness uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatFields {
    /// Parent process id (field 4).
    pub ppid: u32,
    /// User-mode CPU time in clock ticks (field 14).
    pub utime: u64,
    /// Kernel-mode CPU time in clock ticks (field 15).
    pub stime: u64,
    /// User time of waited-for children (field 16).
    pub cutime: u64,
    /// Kernel time of waited-for children (field 17).
    pub cstime: u64,
}

impl StatFields {
    /// All four CPU counters added, in clock ticks.
    pub fn total_ticks(&self) -> u64 {
        self.utime + self.stime + self.cutime + self.cstime
    }
}

/// Parses the text of `/proc/PID/stat`. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<StatFields> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // `f[0]` is field 3 (state), so field n is f[n - 3].
    let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    Some(StatFields {
        ppid: u32::try_from(num(4)?).ok()?,
        utime: num(14)?,
        stime: num(15)?,
        cutime: num(16)?,
        cstime: num(17)?,
    })
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, usually 100).
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

fn read_stat(pid: u32) -> Option<StatFields> {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().as_deref().and_then(parse_stat)
}

/// `pid` and its live descendants.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if let Some(stat) = read_stat(child) {
                children.entry(stat.ppid).or_default().push(child);
            }
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        if let Some(kids) = children.get(&tree[i]) {
            tree.extend(kids.iter().copied().filter(|k| *k != pid));
        }
        i += 1;
    }
    tree
}

/// CPU time used so far by the process tree of `pid`.
pub fn cpu_time(pid: u32) -> Result<Duration> {
    let root = read_stat(pid).ok_or_else(|| anyhow!("process {pid} is gone (no /proc/{pid}/stat)"))?;
    let mut ticks = root.total_ticks();
    for p in process_tree(pid).into_iter().skip(1) {
        ticks += read_stat(p).map(|s| s.total_ticks()).unwrap_or(0);
    }
    Ok(Duration::from_micros(ticks * 1_000_000 / clock_ticks_per_sec()))
}

/// CPU time used so far by this process (all its threads, not its children), with
/// microsecond resolution (`getrusage(RUSAGE_SELF)`): the load generator's own cost.
pub fn own_cpu_time() -> Duration {
    // SAFETY: a zeroed rusage is valid for getrusage to fill.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut u) != 0 {
            return Duration::ZERO;
        }
        u
    };
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Parses the `VmRSS` line of `/proc/PID/status`, in bytes.
pub fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line["VmRSS:".len()..].split_whitespace().next()?.parse().ok()?;
    Some(kb * 1024)
}

/// Resident memory of the process tree of `pid`, in bytes.
pub fn rss_bytes(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("process {pid} is gone (no /proc/{pid}/status)"))?;
    let mut total = parse_vm_rss(&status).ok_or_else(|| anyhow!("no VmRSS in /proc/{pid}/status"))?;
    for p in process_tree(pid).into_iter().skip(1) {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{p}/status")) {
            total += parse_vm_rss(&s).unwrap_or(0);
        }
    }
    Ok(total)
}

/// CPU used per call between two readings, in microseconds.
pub fn cpu_us_per_call(before: Duration, after: Duration, calls: u64) -> Option<f64> {
    (calls > 0).then(|| after.saturating_sub(before).as_secs_f64() * 1e6 / calls as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command_name() {
        let line = "1234 (my (odd) srv) S 77 1234 1234 0 -1 4194560 100 0 0 0 250 31 4 5 20 0 3 0 1000 \
                    123456 789 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s, StatFields { ppid: 77, utime: 250, stime: 31, cutime: 4, cstime: 5 });
        assert_eq!(s.total_ticks(), 290);
        assert_eq!(parse_stat("1234 (x) S"), None);
    }

    #[test]
    fn vm_rss_line() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t    1536 kB\nThreads:\t3\n";
        assert_eq!(parse_vm_rss(status), Some(1536 * 1024));
        assert_eq!(parse_vm_rss("Name:\tx\n"), None);
    }

    #[test]
    fn own_process_is_readable() {
        let me = std::process::id();
        assert!(rss_bytes(me).unwrap() > 0);
        assert!(cpu_time(me).is_ok());
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(20) {}
        assert!(own_cpu_time() > Duration::ZERO);
        assert_eq!(process_tree(me)[0], me);
        assert_eq!(cpu_us_per_call(Duration::from_millis(1), Duration::from_millis(3), 4), Some(500.0));
        assert_eq!(cpu_us_per_call(Duration::ZERO, Duration::ZERO, 0), None);
    }
}
