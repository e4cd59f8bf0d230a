//! Server-sent events, written by hand: the format is four line kinds, and writing it here
//! keeps event ids, `retry` and priming events under our control.

/// Encodes one SSE event.
pub(crate) fn event(id: Option<&str>, name: Option<&str>, data: &str) -> String {
    let mut out = String::with_capacity(data.len() + 32);
    if let Some(id) = id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    if let Some(name) = name {
        out.push_str("event: ");
        out.push_str(name);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// A priming event: an id and empty data, with the reconnection delay (SEP-1699).
pub(crate) fn priming(id: &str, retry_ms: u64) -> String {
    format!("id: {id}\nretry: {retry_ms}\ndata: \n\n")
}

/// The reconnection delay alone (the stream ends after it: come back in `retry_ms`).
pub(crate) fn retry(retry_ms: u64) -> String {
    format!("retry: {retry_ms}\n\n")
}

/// A comment line, to keep idle connections alive through proxies.
pub(crate) const KEEP_ALIVE: &str = ": keep-alive\n\n";

#[cfg(test)]
mod tests {
    #[test]
    fn multi_line_data() {
        assert_eq!(super::event(Some("1"), Some("message"), "a\nb"), "id: 1\nevent: message\ndata: a\ndata: b\n\n");
    }
}
