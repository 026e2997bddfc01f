//! The stdio transport: newline-delimited JSON-RPC on standard input and output.
//!
//! Standard input is read by one thread and standard output written by another, each through
//! its own large buffer (std's `Stdout` flushes at every newline). The writer flushes only when
//! its queue is empty, so a burst of replies costs one `write` system call. Nothing else of the
//! runtime ever writes to standard output; diagnostics go to standard error through `tracing`.

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

use tokio::sync::mpsc;

use super::connection::{Inbound, serve_connection};
use crate::protocol::Frame;
use crate::server::Server;
use crate::server::session::Outbound;

const BUFFER_BYTES: usize = 64 * 1024;

impl Server {
    /// Serves this server on standard input and output until standard input ends, then waits
    /// for the calls in flight to finish and returns.
    ///
    /// Installs a `tracing` subscriber writing to standard error (level from the `MCP_LOG`
    /// environment variable, `warn` by default) unless the program installed one already.
    pub async fn serve_stdio(&self) -> crate::Result<()> {
        init_stderr_logging();
        let limit = self.max_message_bytes();
        let (lines_tx, lines_rx) = mpsc::channel(256);
        let stdin = stdin_reader()?;
        std::thread::Builder::new()
            .name("mcp-stdin".into())
            .spawn(move || read_messages(stdin, limit, &lines_tx))?;
        let (out, frames) = Outbound::new();
        let stdout = stdout_writer()?;
        let writer = std::thread::Builder::new()
            .name("mcp-stdout".into())
            .spawn(move || write_frames(stdout, frames))?;
        serve_connection(self.clone(), lines_rx, out).await;
        let written = tokio::task::spawn_blocking(move || writer.join())
            .await
            .map_err(io::Error::other)?;
        match written {
            Ok(Ok(())) => Ok(()),
            // The client closed its end of the pipe: nothing is left to tell it.
            Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            Ok(Err(e)) => Err(e.into()),
            Err(_) => Err(io::Error::other("the stdout writer panicked").into()),
        }
    }
}

pub(crate) fn init_stderr_logging() {
    if tracing::dispatcher::has_been_set() {
        return;
    }
    let level = std::env::var("MCP_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::WARN);
    let _ = tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_ansi(false)
        .with_max_level(level)
        .try_init();
}

#[cfg(unix)]
fn stdin_reader() -> io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(io::stdin().as_fd().try_clone_to_owned()?.into())
}

#[cfg(not(unix))]
fn stdin_reader() -> io::Result<io::Stdin> {
    Ok(io::stdin())
}

#[cfg(unix)]
fn stdout_writer() -> io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(io::stdout().as_fd().try_clone_to_owned()?.into())
}

#[cfg(not(unix))]
fn stdout_writer() -> io::Result<io::Stdout> {
    Ok(io::stdout())
}

/// Splits input into messages at newlines, skipping blank lines and refusing lines over
/// `limit` bytes without holding them in memory.
pub(crate) fn read_messages(input: impl Read, limit: usize, tx: &mpsc::Sender<Inbound>) {
    let mut input = BufReader::with_capacity(BUFFER_BYTES, input);
    let mut line = Vec::new();
    let mut oversized = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!(%e, "reading standard input failed");
                break;
            }
        };
        if chunk.is_empty() {
            break;
        }
        let (part, complete) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        if !oversized {
            if line.len() + part.len() > limit {
                oversized = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(part);
            }
        }
        let consumed = complete.unwrap_or(part.len());
        input.consume(consumed);
        if complete.is_some() && !emit(&mut line, &mut oversized, limit, tx) {
            return;
        }
    }
    emit(&mut line, &mut oversized, limit, tx);
}

fn emit(
    line: &mut Vec<u8>,
    oversized: &mut bool,
    limit: usize,
    tx: &mpsc::Sender<Inbound>,
) -> bool {
    let item = if std::mem::take(oversized) {
        Inbound::TooLarge { limit }
    } else {
        let message = std::mem::take(line);
        if message.trim_ascii().is_empty() {
            return true;
        }
        Inbound::Message(message)
    };
    tx.blocking_send(item).is_ok()
}

/// Writes frames, one per line, until the queue is closed.
pub(crate) fn write_frames(
    output: impl Write,
    mut frames: mpsc::UnboundedReceiver<Frame>,
) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(BUFFER_BYTES, output);
    while let Some(frame) = frames.blocking_recv() {
        if frame.is_empty() {
            break;
        }
        output.write_all(&frame)?;
        output.write_all(b"\n")?;
        loop {
            match frames.try_recv() {
                Ok(frame) if frame.is_empty() => return output.flush(),
                Ok(frame) => {
                    output.write_all(&frame)?;
                    output.write_all(b"\n")?;
                }
                Err(_) => break,
            }
        }
        output.flush()?;
    }
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(input: &str, limit: usize) -> Vec<String> {
        let (tx, mut rx) = mpsc::channel(64);
        read_messages(input.as_bytes(), limit, &tx);
        drop(tx);
        let mut out = Vec::new();
        while let Ok(item) = rx.try_recv() {
            out.push(match item {
                Inbound::Message(m) => String::from_utf8(m).unwrap(),
                Inbound::TooLarge { .. } => "<too large>".into(),
            });
        }
        out
    }

    #[test]
    fn lines_are_messages_and_blank_lines_are_skipped() {
        assert_eq!(split("a\n\n  \nb\r\nc", 100), ["a", "b\r", "c"]);
    }

    #[test]
    fn oversized_lines_are_refused_and_reading_goes_on() {
        assert_eq!(
            split("short\nmuch too long\nok\n", 6),
            ["short", "<too large>", "ok"]
        );
    }
}
