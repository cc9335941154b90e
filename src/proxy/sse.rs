//! An incremental reader of server-sent events: bytes in, in pieces of any size, whole events
//! out. Bounded: an event larger than the limit is an error, never an unbounded buffer. And
//! the writer of one event, for what the proxy adds to a stream.

/// One event: its `event:` name (empty when it has none) and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// One event as it goes on the wire: its `event:` line when `name` is not empty, a `data:` line
/// for each line of `data`, and the blank line that ends it.
pub fn event(name: &str, data: &str) -> String {
    let mut out = if name.is_empty() { String::new() } else { format!("event: {name}\n") };
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// Splits a byte stream into events (`\n`, `\r\n` or `\r` line ends; comment lines ignored).
#[derive(Debug)]
pub struct SseParser {
    buffer: Vec<u8>,
    event: String,
    data: Vec<String>,
    limit: usize,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl SseParser {
    /// A parser that refuses events of more than `limit` bytes.
    pub fn new(limit: usize) -> SseParser {
        SseParser { buffer: Vec::new(), event: String::new(), data: Vec::new(), limit, after_cr: false }
    }

    /// Read `bytes`; the events they complete, or an error when one grows past the limit.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, String> {
        let mut events = Vec::new();
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let crlf = bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n');
            if bytes[end] == b'\r' && end + 1 == bytes.len() {
                self.after_cr = true;
            }
            self.buffer.extend_from_slice(&bytes[..end]);
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.buffer)).into_owned();
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
            bytes = &bytes[end + if crlf { 2 } else { 1 }..];
        }
        self.buffer.extend_from_slice(bytes);
        let pending = self.buffer.len() + self.data.iter().map(String::len).sum::<usize>();
        if pending > self.limit {
            return Err(format!("an event of the reply is larger than {} bytes", self.limit));
        }
        Ok(events)
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            if self.data.is_empty() && self.event.is_empty() {
                return None;
            }
            let event = SseEvent { event: std::mem::take(&mut self.event), data: self.data.join("\n") };
            self.data.clear();
            return Some(event);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = value.to_owned(),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_written_is_read_back_as_it_was() {
        assert_eq!(event("error", "{\"a\":1}"), "event: error\ndata: {\"a\":1}\n\n");
        assert_eq!(event("", "[DONE]"), "data: [DONE]\n\n");
        let mut parser = SseParser::new(1024);
        let events = parser.push(event("x", "one\ntwo").as_bytes()).unwrap();
        assert_eq!(events, [SseEvent { event: "x".into(), data: "one\ntwo".into() }]);
    }

    #[test]
    fn events_come_out_whole_whatever_the_pieces() {
        let stream = b"event: message_start\ndata: {\"a\":1}\n\n: ping\r\nevent: x\r\ndata: one\r\ndata: two\r\n\r\ndata: [DONE]\n\n";
        for size in 1..stream.len() {
            let mut parser = SseParser::new(1024);
            let events: Vec<SseEvent> = stream.chunks(size).flat_map(|c| parser.push(c).unwrap()).collect();
            assert_eq!(
                events,
                vec![
                    SseEvent { event: "message_start".into(), data: "{\"a\":1}".into() },
                    SseEvent { event: "x".into(), data: "one\ntwo".into() },
                    SseEvent { event: String::new(), data: "[DONE]".into() },
                ],
                "pieces of {size}"
            );
        }
    }

    #[test]
    fn an_event_over_the_limit_is_an_error() {
        let mut parser = SseParser::new(16);
        assert!(parser.push(b"data: 0123456789").is_ok());
        assert!(parser.push(b"0123456789").unwrap_err().contains("larger than 16 bytes"));
    }
}
