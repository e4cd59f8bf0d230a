//! What machine the figures come from.

use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

/// The machine and toolchain a suite ran on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MachineInfo {
    /// `model name` of the first CPU in `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Online CPUs.
    pub cores: usize,
    /// CPUs this process may use.
    pub allowed_cpus: usize,
    /// Kernel release (`/proc/sys/kernel/osrelease`).
    pub kernel: String,
    /// `rustc --version`.
    pub rustc: String,
    /// When the suite ran (UTC, ISO 8601).
    pub date_utc: String,
    /// Which CPU the servers and the load generator ran on.
    pub pinning: String,
    /// The 1-minute load average when the suite started (`/proc/loadavg`): other work on the
    /// machine lowers req/s far more than it changes CPU per call.
    pub load_average: Option<f64>,
}

/// The 1-minute load average, from `/proc/loadavg`.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// Reads the machine's description. `allowed_cpus` is read by the caller before it pins
/// itself; `pinning` says what it did.
pub fn collect(allowed_cpus: usize, pinning: String) -> MachineInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    MachineInfo {
        cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".into()),
        // SAFETY: sysconf has no preconditions.
        cores: usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).unwrap_or(0),
        allowed_cpus,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|_| "unknown".into()),
        rustc: std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_else(|| "unknown".into()),
        date_utc: utc_datetime(secs),
        pinning,
        load_average: load_average(),
    }
}

/// The `model name` (or, on some ARM kernels, `Model`/`Hardware`) line of `/proc/cpuinfo`.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == *key).then(|| v.trim().to_owned())
        })
    })
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_datetime(secs: u64) -> String {
    // The protocol's RFC 3339 formatter, without its (here always zero) milliseconds.
    let with_millis = mcpwire_protocol::types::iso8601_from_unix_ms(secs.saturating_mul(1000));
    format!("{}Z", with_millis.trim_end_matches("Z").trim_end_matches(".000"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_datetime(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_datetime(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_datetime(1_785_196_799), "2026-07-27T23:59:59Z");
    }

    #[test]
    fn cpu_models() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(x86).as_deref(), Some("Intel(R) Xeon(R) CPU @ 2.20GHz"));
        assert_eq!(cpu_model("Hardware\t: BCM2835\n").as_deref(), Some("BCM2835"));
        assert_eq!(cpu_model(""), None);
        assert!(load_average().is_some_and(|l| l >= 0.0));
    }
}
