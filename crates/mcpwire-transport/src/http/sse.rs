//! An incremental parser of `text/event-stream` bodies.

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// `event:` (empty means `message`).
    pub event: String,
    /// The joined `data:` lines.
    pub data: String,
    /// `id:`, if the event had one.
    pub id: Option<String>,
    /// `retry:` in milliseconds, if given.
    pub retry: Option<u64>,
}

/// Feeds bytes in, gets whole events out. Lines may end in `\n`, `\r\n` or `\r`.
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    current: Event,
    has_data: bool,
    has_fields: bool,
}

impl Parser {
    /// Adds a chunk and returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n' || b == b'\r') {
            // A lone `\r` at the end of the buffer may be the first half of `\r\n`: wait for more.
            if self.buf[end] == b'\r' && end + 1 == self.buf.len() {
                break;
            }
            let skip = if self.buf[end] == b'\r' && self.buf.get(end + 1) == Some(&b'\n') { 2 } else { 1 };
            let line: Vec<u8> = self.buf.drain(..end + skip).take(end).collect();
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                if self.has_fields {
                    let mut event = std::mem::take(&mut self.current);
                    if !self.has_data {
                        event.data.clear();
                    }
                    events.push(event);
                }
                self.has_data = false;
                self.has_fields = false;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (&*line, ""),
            };
            self.has_fields = true;
            match field {
                "event" => self.current.event = value.to_owned(),
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                }
                "id" if !value.contains('\0') => self.current.id = Some(value.to_owned()),
                "retry" => self.current.retry = value.parse().ok(),
                _ => {}
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_split_chunks_and_line_endings() {
        let mut p = Parser::default();
        assert!(p.feed(b"id: 1-0\r\nretry: 500\r\nda").is_empty());
        let evs = p.feed(b"ta: \r\n\r\n: keep-alive\n\nevent: message\ndata: {\"a\":\ndata: 1}\n\n");
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].id.as_deref(), Some("1-0"));
        assert_eq!(evs[0].retry, Some(500));
        assert_eq!(evs[0].data, "");
        assert_eq!(evs[1].event, "message");
        assert_eq!(evs[1].data, "{\"a\":\n1}");
    }
}
