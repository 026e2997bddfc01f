//! Line splitting for newline-delimited JSON (the stdio transport): bytes in, one message
//! per line out, blank lines skipped, and a line over the limit refused without being held.

use super::connection::Line;

/// Splits bytes into messages at newlines, skipping blank lines and refusing lines over the
/// limit without holding them in memory. A message that lies within one chunk is lent
/// straight from it; one split across reads is gathered in a buffer that is kept.
pub(crate) struct LineSplitter {
    line: Vec<u8>,
    /// The current line is over the limit; its bytes are dropped until its newline.
    oversized: bool,
    /// `line` was lent out as a message and is to be cleared before the next one.
    lent: bool,
    limit: usize,
}

impl LineSplitter {
    pub(crate) fn new(limit: usize) -> LineSplitter {
        LineSplitter {
            line: Vec::new(),
            oversized: false,
            lent: false,
            limit,
        }
    }

    /// Takes bytes up to and including the next newline: how many it took, and the message
    /// they completed, if any.
    pub(crate) fn feed<'s>(&'s mut self, chunk: &'s [u8]) -> (usize, Option<Line<'s>>) {
        if std::mem::take(&mut self.lent) {
            self.line.clear();
        }
        let Some(end) = memchr::memchr(b'\n', chunk) else {
            self.gather(chunk);
            return (chunk.len(), None);
        };
        let part = &chunk[..end];
        let consumed = end + 1;
        if !self.oversized && self.line.is_empty() {
            // The whole message is in this chunk: lent, not copied.
            return (consumed, self.message(part));
        }
        self.gather(part);
        (consumed, self.take())
    }

    /// The last message, when the input ends without a newline.
    pub(crate) fn finish(&mut self) -> Option<Line<'_>> {
        if std::mem::take(&mut self.lent) {
            self.line.clear();
        }
        self.take()
    }

    fn gather(&mut self, part: &[u8]) {
        if self.oversized {
            return;
        }
        if self.line.len() + part.len() > self.limit {
            self.oversized = true;
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(part);
        }
    }

    /// The gathered line as a message.
    fn take(&mut self) -> Option<Line<'_>> {
        if std::mem::take(&mut self.oversized) {
            return Some(Line::TooLarge { limit: self.limit });
        }
        self.lent = true;
        let limit = self.limit;
        Self::classify(&self.line, limit)
    }

    fn message<'a>(&self, part: &'a [u8]) -> Option<Line<'a>> {
        Self::classify(part, self.limit)
    }

    fn classify(line: &[u8], limit: usize) -> Option<Line<'_>> {
        if line.len() > limit {
            return Some(Line::TooLarge { limit });
        }
        if line.trim_ascii().is_empty() {
            return None;
        }
        Some(Line::Message(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_split_across_reads_is_gathered_whole() {
        for step in [1, 2, 3, 7] {
            let input = b"{\"a\":1}\n\n0123456789ABC\n{\"b\":2}\n";
            let mut splitter = LineSplitter::new(10);
            let mut seen = Vec::new();
            let mut pending: &[u8] = &[];
            let mut rest: &[u8] = input;
            while !rest.is_empty() || !pending.is_empty() {
                if pending.is_empty() {
                    let n = step.min(rest.len());
                    (pending, rest) = rest.split_at(n);
                }
                let (consumed, line) = splitter.feed(pending);
                if let Some(line) = line {
                    seen.push(match line {
                        Line::Message(m) => String::from_utf8(m.to_vec()).unwrap(),
                        Line::TooLarge { .. } => "<too large>".into(),
                    });
                }
                pending = &pending[consumed..];
            }
            assert_eq!(
                seen,
                [r#"{"a":1}"#, "<too large>", r#"{"b":2}"#],
                "reads of {step}"
            );
        }
    }
}
