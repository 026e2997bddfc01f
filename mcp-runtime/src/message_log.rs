//! The message log (`MCP_TRACE`): every JSON-RPC message in and out, one line each, to
//! standard error or to a file — what a logging proxy between client and server would show,
//! without one. Standard output is never touched. The file is readable by its owner alone, and values can be
//! redacted by member name (`MCP_TRACE_REDACT`).

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

/// The member names `MCP_TRACE_REDACT` asks to redact (comma-separated).
pub(crate) fn redact_from_env() -> Vec<String> {
    std::env::var("MCP_TRACE_REDACT")
        .map(|names| {
            names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// What a redacted value is replaced with.
const REDACTED: &str = "[redacted]";

/// An open message log.
pub(crate) struct MessageTrace {
    sink: Mutex<Box<dyn Write + Send>>,
    /// Member names whose values are replaced, wherever they are in a message.
    redact: Vec<String>,
}

impl MessageTrace {
    pub(crate) fn open(log: &MessageLog, redact: Vec<String>) -> io::Result<MessageTrace> {
        let sink: Box<dyn Write + Send> = match log {
            MessageLog::Stderr => Box::new(io::stderr()),
            MessageLog::File(path) => Box::new(open_private(path)?),
        };
        Ok(MessageTrace {
            sink: Mutex::new(sink),
            redact,
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
        if self.redact.is_empty() {
            // A line per message: line breaks (JSON whitespace) inside one become spaces,
            // so a client cannot write lines of its own into the log.
            line.extend(message.trim_ascii().iter().map(|&b| match b {
                b'\n' | b'\r' => b' ',
                b => b,
            }));
        } else {
            line.extend_from_slice(self.redacted(message).as_bytes());
        }
        line.push(b'\n');
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        // A log that cannot be written must not stop the server.
        let _ = sink.write_all(&line).and_then(|()| sink.flush());
    }

    /// The message with the values of the named members replaced; a message that is not
    /// JSON could hide anything, so only its size is logged.
    fn redacted(&self, message: &[u8]) -> String {
        match serde_json::from_slice::<serde_json::Value>(message) {
            Ok(mut value) => {
                redact(&mut value, &self.redact);
                value.to_string()
            }
            Err(_) => format!("[{} bytes that are not JSON, redacted]", message.len()),
        }
    }
}

fn redact(value: &mut serde_json::Value, names: &[String]) {
    match value {
        serde_json::Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                if names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
                    *member = serde_json::Value::String(REDACTED.into());
                } else {
                    redact(member, names);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                redact(item, names);
            }
        }
        _ => {}
    }
}

/// Opens a log file for appending, readable and writable by its owner alone: it holds every
/// argument and result in full. A file that already existed is made private too.
fn open_private(path: &std::path::Path) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        // Not through a symbolic link: whoever can write where the log lives could point it
        // at a file of the server's user, which would then be appended to and made 0600.
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        let file = options.open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        options.open(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_members_are_redacted_anywhere_in_a_message() {
        let trace = MessageTrace {
            sink: Mutex::new(Box::new(io::sink())),
            redact: vec!["password".into(), "Token".into()],
        };
        let line = trace.redacted(
            br#"{"params":{"name":"login","arguments":{"user":"ada","password":"hunter2","nested":[{"token":"t0k"}]}}}"#,
        );
        assert!(!line.contains("hunter2") && !line.contains("t0k"), "{line}");
        assert!(
            line.contains(r#""user":"ada""#) && line.contains(REDACTED),
            "{line}"
        );
        assert_eq!(
            trace.redacted(b"password=hunter2"),
            "[16 bytes that are not JSON, redacted]"
        );
    }

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_message_with_line_breaks_is_still_one_line() {
        let sink = Shared::default();
        let trace = MessageTrace {
            sink: Mutex::new(Box::new(sink.clone())),
            redact: Vec::new(),
        };
        trace.incoming(b"{\"a\":[1,\ntrue ,\r\n\"$(touch x)\"]}");
        let written = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(written.lines().count(), 1, "{written}");
        assert!(
            written.ends_with("{\"a\":[1, true ,  \"$(touch x)\"]}\n"),
            "{written}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_log_file_is_never_opened_through_a_symbolic_link() {
        let dir = std::env::temp_dir().join(format!("mcp-trace-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("victim");
        std::fs::write(&target, b"precious").unwrap();
        let link = dir.join("trace.log");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let opened = MessageTrace::open(&MessageLog::File(link), Vec::new());
        let untouched = std::fs::read(&target).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(opened.is_err());
        assert_eq!(untouched, b"precious");
    }

    #[cfg(unix)]
    #[test]
    fn a_log_file_is_readable_by_its_owner_alone() {
        use std::os::unix::fs::PermissionsExt as _;
        let path = std::env::temp_dir().join(format!("mcp-trace-mode-{}", std::process::id()));
        std::fs::write(&path, b"").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let _trace = MessageTrace::open(&MessageLog::File(path.clone()), Vec::new()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        let _ = std::fs::remove_file(&path);
        assert_eq!(mode, 0o600);
    }

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
