//! Reading Server-Sent Events (the `text/event-stream` format of the HTML standard): events
//! cut at blank lines, `data` lines joined, `id` and `retry` remembered for resumption,
//! comments skipped. Lines may end in `\n`, `\r\n` or `\r`.

/// One event.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Event {
    /// The `event` field; `None` means the default type, `message`.
    pub kind: Option<String>,
    /// The `data` lines, joined with `\n`.
    pub data: String,
    /// The `id` field, if the event had one.
    pub id: Option<String>,
    /// The `retry` field, in milliseconds, if the event had a valid one.
    pub retry: Option<u64>,
}

/// An incremental parser: feed it bytes as they arrive, take the events it completes.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    buffer: Vec<u8>,
    current: Event,
    has_fields: bool,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

/// The most a single event may hold before the stream is judged broken.
const MAX_EVENT: usize = 16 * 1024 * 1024;

impl Parser {
    /// Takes `bytes`, and returns the events they complete; `Err` when one event grows past
    /// the limit.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) -> Result<Vec<Event>, String> {
        let mut events = Vec::new();
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' | b'\r' => {
                    self.buffer.extend_from_slice(&bytes[start..i]);
                    let line = std::mem::take(&mut self.buffer);
                    self.line(&line, &mut events);
                    if bytes[i] == b'\r' {
                        if i + 1 == bytes.len() {
                            self.after_cr = true;
                        } else if bytes[i + 1] == b'\n' {
                            i += 1;
                        }
                    }
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        self.buffer.extend_from_slice(&bytes[start..]);
        if self.buffer.len() + self.current.data.len() > MAX_EVENT {
            return Err("an event of the stream is larger than 16 MiB".into());
        }
        Ok(events)
    }

    fn line(&mut self, line: &[u8], events: &mut Vec<Event>) {
        if line.is_empty() {
            if self.has_fields {
                let mut event = std::mem::take(&mut self.current);
                if event.data.ends_with('\n') {
                    event.data.pop();
                }
                events.push(event);
                self.has_fields = false;
            }
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*text, ""),
        };
        match field {
            "data" => {
                self.current.data.push_str(value);
                self.current.data.push('\n');
                self.has_fields = true;
            }
            "event" => {
                self.current.kind = Some(value.to_owned());
                self.has_fields = true;
            }
            "id" if !value.contains('\0') => {
                self.current.id = Some(value.to_owned());
                self.has_fields = true;
            }
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.current.retry = Some(ms);
                    self.has_fields = true;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_at_blank_lines_whatever_the_line_ends() {
        let mut parser = Parser::default();
        let mut events = parser
            .feed(b"id: 1\nretry: 500\ndata: \n\n: comment\n\nevent: endpoint\r\ndata: /m?s=1\r")
            .unwrap();
        events.extend(parser.feed(b"\n\r\ndata: {\"a\":\ndata: 1}\n\n").unwrap());
        assert_eq!(
            events,
            vec![
                Event {
                    id: Some("1".into()),
                    retry: Some(500),
                    ..Event::default()
                },
                Event {
                    kind: Some("endpoint".into()),
                    data: "/m?s=1".into(),
                    ..Event::default()
                },
                Event {
                    data: "{\"a\":\n1}".into(),
                    ..Event::default()
                },
            ]
        );
    }

    #[test]
    fn an_event_split_across_chunks_is_whole() {
        let mut parser = Parser::default();
        assert!(parser.feed(b"da").unwrap().is_empty());
        assert!(parser.feed(b"ta: x").unwrap().is_empty());
        assert_eq!(parser.feed(b"\n\n").unwrap()[0].data, "x");
    }
}
