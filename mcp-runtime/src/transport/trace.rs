//! `MCP_TRACE`: every JSON-RPC message in and out, one line each, to standard error or to a
//! file — what a logging proxy between client and server would show, without one. Standard
//! output is never touched.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Mutex;

/// Where the message log goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageLog {
    /// Standard error, beside the server's own logs.
    Stderr,
    /// A file, appended to.
    File(PathBuf),
}

impl MessageLog {
    /// The log `MCP_TRACE` asks for: `1`, `true`, `yes`, `on` or `stderr` (in any case) for
    /// standard error, any other value a file path; unset, empty, `0`, `false`, `no` or
    /// `off` for none.
    pub fn from_env() -> Option<MessageLog> {
        MessageLog::parse(&std::env::var_os("MCP_TRACE")?)
    }

    fn parse(value: &std::ffi::OsStr) -> Option<MessageLog> {
        let word = value.to_str().map(str::to_ascii_lowercase);
        match word.as_deref() {
            Some("" | "0" | "false" | "no" | "off") => None,
            Some("1" | "true" | "yes" | "on" | "stderr") => Some(MessageLog::Stderr),
            _ => Some(MessageLog::File(PathBuf::from(value))),
        }
    }
}

/// An open message log.
pub(crate) struct MessageTrace {
    sink: Mutex<Box<dyn Write + Send>>,
}

impl MessageTrace {
    pub(crate) fn open(log: &MessageLog) -> io::Result<MessageTrace> {
        let sink: Box<dyn Write + Send> = match log {
            MessageLog::Stderr => Box::new(io::stderr()),
            MessageLog::File(path) => {
                Box::new(OpenOptions::new().create(true).append(true).open(path)?)
            }
        };
        Ok(MessageTrace {
            sink: Mutex::new(sink),
        })
    }

    /// A message the server received.
    pub(crate) fn incoming(&self, message: &[u8]) {
        self.line("<-", message);
    }

    /// A message the server sent.
    pub(crate) fn outgoing(&self, message: &[u8]) {
        self.line("->", message);
    }

    fn line(&self, direction: &str, message: &[u8]) {
        let now = crate::tasks::iso8601(crate::tasks::now_ms());
        let mut line = Vec::with_capacity(message.len() + 40);
        line.extend_from_slice(format!("mcp-trace {now} {direction} ").as_bytes());
        line.extend_from_slice(message.trim_ascii());
        line.push(b'\n');
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        // A log that cannot be written must not stop the server.
        let _ = sink.write_all(&line).and_then(|()| sink.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_read_as_switches_and_anything_else_as_a_path() {
        let parse = |v: &str| MessageLog::parse(std::ffi::OsStr::new(v));
        for on in ["1", "true", "YES", "On", "stderr"] {
            assert_eq!(parse(on), Some(MessageLog::Stderr), "{on}");
        }
        for off in ["", "0", "false", "No", "OFF"] {
            assert_eq!(parse(off), None, "{off}");
        }
        assert_eq!(
            parse("/tmp/mcp.log"),
            Some(MessageLog::File(PathBuf::from("/tmp/mcp.log")))
        );
    }
}
