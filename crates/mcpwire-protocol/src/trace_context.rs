//! W3C Trace Context in `_meta`: the `traceparent` and `tracestate` members by which a
//! client's trace continues in the server (and through a proxy to the server behind it).

/// The `_meta` member with the caller's trace and span (W3C `traceparent`).
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` member with vendor trace state (W3C `tracestate`).
pub const TRACESTATE: &str = "tracestate";

/// A `traceparent` value: `{version}-{trace-id}-{parent-id}-{flags}` in lowercase hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace, 16 bytes, not all zero.
    pub trace_id: [u8; 16],
    /// The caller's span, 8 bytes, not all zero.
    pub parent_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl TraceParent {
    /// Reads a `traceparent` value as the W3C recommendation says: version `00` exactly,
    /// a later version by its first four fields (what follows must start with `-`); version
    /// `ff`, upper-case hex, and all-zero ids are invalid.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        // Header values are ASCII; anything else is refused before slicing by bytes.
        if !text.is_ascii() || bytes.len() < 55 || [2, 35, 52].iter().any(|&i| bytes[i] != b'-') {
            return None;
        }
        let version = hex::<1>(&text[0..2])?[0];
        match version {
            0xff => return None,
            0 if bytes.len() != 55 => return None,
            _ if bytes.len() > 55 && bytes[55] != b'-' => return None,
            _ => {}
        }
        let trace_id = hex::<16>(&text[3..35])?;
        let parent_id = hex::<8>(&text[36..52])?;
        let flags = hex::<1>(&text[53..55])?[0];
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(Self { trace_id, parent_id, flags })
    }

    /// Whether the caller sampled this trace.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

impl std::fmt::Display for TraceParent {
    /// Version `00`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("00-")?;
        self.trace_id.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        f.write_str("-")?;
        self.parent_id.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        write!(f, "-{:02x}", self.flags)
    }
}

/// `N` bytes from `2N` lowercase hex digits.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0; N];
    for (i, pair) in digits.chunks(2).enumerate() {
        out[i] = value(pair[0])? << 4 | value(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_reads_and_writes_back() {
        let parent = TraceParent::parse(VALID).expect("valid");
        assert_eq!(parent.trace_id[0], 0x4b);
        assert_eq!(parent.parent_id[7], 0xb7);
        assert!(parent.sampled());
        assert_eq!(parent.to_string(), VALID);
        // A later version: the first four fields, whatever follows a dash.
        let later = format!("01{}-what-comes-later", &VALID[2..]);
        assert_eq!(TraceParent::parse(&later).map(|p| p.to_string()), Some(VALID.to_owned()));
    }

    #[test]
    fn invalid_traceparents_are_refused() {
        let zero_trace = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        let zero_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01";
        let upper = VALID.to_uppercase();
        let version_ff = format!("ff{}", &VALID[2..]);
        let v00_longer = format!("{VALID}-x");
        let later_no_dash = format!("01{}x", &VALID[2..]);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            zero_trace,
            zero_parent,
            &upper,
            &version_ff,
            &v00_longer,
            &later_no_dash,
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0ü",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
    }
}
