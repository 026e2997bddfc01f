//! The stdio transport: newline-delimited JSON-RPC on standard input and output.
//!
//! When both are pipes (as when a client spawns the server), the connection's own task reads
//! and writes them on Tokio's reactor: a request that its handler answers without waiting
//! costs one wake-up of one thread, as a hand-written loop would. The pipes are reopened
//! through `/proc/self/fd` so that the non-blocking mode lives on descriptions of this
//! process's own, never on the standard streams it shares with its parent and children.
//! Otherwise (a file, a terminal, a socket) one thread reads and another writes, each
//! through a large buffer.
//!
//! Output is buffered and flushed when no more frames are ready, so a burst of replies costs
//! one `write`. Nothing else of the runtime ever writes to standard output; diagnostics go to
//! standard error through `tracing`. On Unix nothing else of the program can either: the
//! transport takes the real standard output for itself and points descriptor 1 at standard
//! error (`protocol_stdout`).

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

use tokio::sync::mpsc;

use super::connection::{Connection, Inbound, Line};
use super::lines::LineSplitter;
use crate::protocol::Frame;
use crate::server::Server;
use crate::session::{Outbound, OutboundQueue};

const BUFFER_BYTES: usize = 64 * 1024;

/// How many messages already read are handled before the replies they produced are
/// written: a burst of requests is answered with one `write`, and none waits long.
const BURST: usize = 64;

impl Server {
    /// Serves this server on standard input and output until standard input ends, then waits
    /// for the calls in flight to finish and returns.
    ///
    /// Installs a `tracing` subscriber writing to standard error (level from the `MCP_LOG`
    /// environment variable, `warn` by default) unless the program installed one already.
    ///
    /// On Unix, standard output belongs to the protocol from the first call on: the
    /// transport keeps the real standard output for itself (child processes do not inherit
    /// it) and points descriptor 1 at standard error for the rest of the program. A stray
    /// `println!`, a dependency that prints, or a child process started by a tool writes to
    /// standard error, where it lands in the server's log, instead of corrupting a frame.
    ///
    /// ```no_run
    /// #[mcp_runtime::main]
    /// async fn main() -> mcp_runtime::Result<()> {
    ///     let server = mcp_runtime::server!().build()?;
    ///     // From here on, `println!` writes to standard error.
    ///     server.serve_stdio().await
    /// }
    /// ```
    pub async fn serve_stdio(&self) -> crate::Result<()> {
        init_stderr_logging();
        let limit = self.max_message_bytes();
        let mut input = Input::open(limit)?;
        let (out, mut frames) = Outbound::new();
        let mut output = Output::open(&frames)?;
        let connection = Connection::new(self.clone(), out);
        // Replies ready at once, written after the burst of messages that made them without
        // passing through the queue (whose every frame wakes this task once more).
        let mut ready = Vec::new();
        // Replies are written as soon as they are made or queued, between two reads.
        loop {
            tokio::select! {
                biased;
                Some(frame) = frames.recv() => {
                    output.write(std::iter::once(frame), &mut frames, self).await;
                }
                more = input.next(|line| ready.extend(connection.answer(line))) => {
                    if !more {
                        break;
                    }
                    for _ in 1..BURST {
                        if !input.next_ready(|line| ready.extend(connection.answer(line))) {
                            break;
                        }
                    }
                    if !ready.is_empty() {
                        output.write(ready.drain(..), &mut frames, self).await;
                    }
                }
            }
        }
        // The input ended: what is in flight finishes and is written, then the output closes.
        let close = connection.close();
        tokio::pin!(close);
        let mut closed = false;
        loop {
            tokio::select! {
                biased;
                frame = frames.recv() => match frame {
                    Some(frame) if !frame.is_empty() => {
                        output.write(std::iter::once(frame), &mut frames, self).await;
                    }
                    _ => break,
                },
                () = &mut close, if !closed => closed = true,
            }
        }
        if !closed {
            close.await;
        }
        output.finish().await
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

/// Where messages come from.
enum Input {
    /// Standard input as a pipe on the reactor.
    #[cfg(target_os = "linux")]
    Pipe(pipes::LineReader),
    /// A thread reading standard input, handing over each message.
    Thread(mpsc::Receiver<Inbound>),
}

impl Input {
    fn open(limit: usize) -> io::Result<Input> {
        #[cfg(target_os = "linux")]
        if let Some(reader) = pipes::stdin(limit) {
            return Ok(Input::Pipe(reader));
        }
        let (tx, rx) = mpsc::channel(256);
        let stdin = stdin_reader()?;
        std::thread::Builder::new()
            .name("mcp-stdin".into())
            .spawn(move || read_messages(stdin, limit, &tx))?;
        Ok(Input::Thread(rx))
    }

    /// Hands the next message to `handle`; false at the end of the input.
    async fn next(&mut self, handle: impl FnOnce(Line<'_>)) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Input::Pipe(reader) => reader.next(handle).await,
            Input::Thread(rx) => match rx.recv().await {
                Some(item) => {
                    handle(item.as_line());
                    true
                }
                None => false,
            },
        }
    }

    /// Hands the next message to `handle` when it has been read already, without waiting;
    /// false when there is none.
    fn next_ready(&mut self, handle: impl FnOnce(Line<'_>)) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Input::Pipe(reader) => reader.next_buffered(handle),
            Input::Thread(rx) => match rx.try_recv() {
                Ok(item) => {
                    handle(item.as_line());
                    true
                }
                Err(_) => false,
            },
        }
    }
}

/// Where frames go.
enum Output {
    /// Standard output as a pipe on the reactor.
    #[cfg(target_os = "linux")]
    Pipe(Option<tokio::io::BufWriter<tokio::net::unix::pipe::Sender>>),
    /// A thread writing standard output.
    Thread {
        frames: Outbound,
        writer: std::thread::JoinHandle<io::Result<()>>,
    },
}

impl Output {
    fn open(queue: &OutboundQueue) -> io::Result<Output> {
        let stdout = stdout_writer()?;
        #[cfg(target_os = "linux")]
        if let Some(pipe) = pipes::stdout(&stdout) {
            return Ok(Output::Pipe(Some(tokio::io::BufWriter::with_capacity(
                BUFFER_BYTES,
                pipe,
            ))));
        }
        // Frames handed to the thread count against the queue's budget until written.
        let (frames, queue) = queue.forwarder();
        let writer = std::thread::Builder::new()
            .name("mcp-stdout".into())
            .spawn(move || write_frames(stdout, queue))?;
        Ok(Output::Thread { frames, writer })
    }

    /// Writes frames, then every frame already queued, then flushes.
    async fn write(
        &mut self,
        first: impl IntoIterator<Item = Frame>,
        queue: &mut OutboundQueue,
        server: &Server,
    ) {
        match self {
            #[cfg(target_os = "linux")]
            Output::Pipe(slot) => {
                let Some(pipe) = slot else { return };
                if let Err(e) = pipes::write_all(pipe, first, queue, server).await {
                    // The client closed its end: nothing is left to tell it.
                    tracing::debug!(%e, "standard output is closed; replies are dropped");
                    *slot = None;
                }
            }
            Output::Thread { frames, .. } => {
                for frame in first {
                    server.trace_out(&frame);
                    frames.send(frame);
                }
                while let Some(frame) = queue.try_recv() {
                    server.trace_out(&frame);
                    frames.send(frame);
                }
            }
        }
    }

    /// Flushes and closes the output.
    async fn finish(self) -> crate::Result<()> {
        match self {
            #[cfg(target_os = "linux")]
            Output::Pipe(pipe) => {
                if let Some(mut pipe) = pipe {
                    use tokio::io::AsyncWriteExt as _;
                    match pipe.flush().await {
                        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => return Err(e.into()),
                        _ => {}
                    }
                }
                Ok(())
            }
            Output::Thread { frames, writer } => {
                frames.close();
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
    }
}

#[cfg(target_os = "linux")]
mod pipes {
    use std::fs::OpenOptions;
    use std::io;
    use std::os::unix::fs::OpenOptionsExt as _;

    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, BufWriter};
    use tokio::net::unix::pipe;

    use super::{BUFFER_BYTES, LineSplitter};
    use crate::protocol::Frame;
    use crate::session::OutboundQueue;
    use crate::transport::connection::Line;

    /// Standard input, when it is a pipe, on a description of its own.
    pub(super) fn stdin(limit: usize) -> Option<LineReader> {
        // Opened non-blocking so that a pipe whose writer is gone does not block the open.
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/proc/self/fd/0")
            .ok()?;
        grow(&file);
        let receiver = pipe::Receiver::from_file(file).ok()?;
        Some(LineReader {
            input: BufReader::with_capacity(BUFFER_BYTES, receiver),
            splitter: LineSplitter::new(limit),
            done: false,
        })
    }

    /// Standard output (as taken for the protocol), when it is a pipe, on a description of
    /// its own.
    pub(super) fn stdout(stdout: &std::fs::File) -> Option<pipe::Sender> {
        use std::os::fd::AsRawFd as _;
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(format!("/proc/self/fd/{}", stdout.as_raw_fd()))
            .ok()?;
        grow(&file);
        pipe::Sender::from_file(file).ok()
    }

    /// How many bytes a pipe holds, asked for: a large message crosses in one piece
    /// instead of 16 round trips of a 64 KiB pipe, each waking both ends. The kernel
    /// allocates the pages only as bytes wait in the pipe.
    const PIPE_BYTES: libc::c_int = 1 << 20;

    /// Grows the pipe, when the system lets this process (its limit on pipe sizes, or on
    /// the pages of its user's pipes, may not): a smaller pipe only costs more wake-ups.
    fn grow(pipe: &std::fs::File) {
        use std::os::fd::AsRawFd as _;
        // SAFETY: F_SETPIPE_SZ takes an int and changes nothing but the pipe's capacity;
        // the descriptor is open for the call's duration.
        let _ = unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES) };
    }

    /// Messages from a pipe, split at newlines.
    pub(super) struct LineReader {
        input: BufReader<pipe::Receiver>,
        splitter: LineSplitter,
        done: bool,
    }

    impl LineReader {
        /// Hands the next message among the bytes read already to `handle`, if a whole one
        /// is there; false when none is.
        pub(super) fn next_buffered(&mut self, handle: impl FnOnce(Line<'_>)) -> bool {
            loop {
                let buffered = self.input.buffer();
                if buffered.is_empty() {
                    return false;
                }
                let (consumed, line) = self.splitter.feed(buffered);
                if let Some(line) = line {
                    handle(line);
                    self.input.consume(consumed);
                    return true;
                }
                self.input.consume(consumed);
            }
        }

        /// Reads until a whole message is there and hands it to `handle` (borrowed from the
        /// buffer, not copied, when it lies in one read); false at the end of the input.
        pub(super) async fn next(&mut self, handle: impl FnOnce(Line<'_>)) -> bool {
            loop {
                if self.done {
                    return false;
                }
                let chunk = match self.input.fill_buf().await {
                    Ok(chunk) => chunk,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        tracing::warn!(%e, "reading standard input failed");
                        &[]
                    }
                };
                if chunk.is_empty() {
                    self.done = true;
                    return match self.splitter.finish() {
                        Some(line) => {
                            handle(line);
                            true
                        }
                        None => false,
                    };
                }
                let (consumed, line) = self.splitter.feed(chunk);
                if let Some(line) = line {
                    handle(line);
                    self.input.consume(consumed);
                    return true;
                }
                self.input.consume(consumed);
            }
        }
    }

    /// Writes frames, one per line, then those queued, and flushes once no more are.
    pub(super) async fn write_all(
        pipe: &mut BufWriter<pipe::Sender>,
        first: impl IntoIterator<Item = Frame>,
        queue: &mut OutboundQueue,
        server: &crate::server::Server,
    ) -> io::Result<()> {
        for frame in first {
            write_line(pipe, frame, server).await?;
        }
        while let Some(frame) = queue.try_recv() {
            write_line(pipe, frame, server).await?;
        }
        pipe.flush().await
    }

    async fn write_line(
        pipe: &mut BufWriter<pipe::Sender>,
        frame: Frame,
        server: &crate::server::Server,
    ) -> io::Result<()> {
        if !frame.is_empty() {
            server.trace_out(&frame);
            pipe.write_all(&frame).await?;
            pipe.write_all(b"\n").await?;
        }
        crate::protocol::spare::recycle(frame);
        Ok(())
    }
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
    super::protocol_stdout::take()
}

#[cfg(not(unix))]
fn stdout_writer() -> io::Result<io::Stdout> {
    Ok(io::stdout())
}

/// Reads messages on a thread of its own, for inputs that are not pipes.
pub(crate) fn read_messages(input: impl Read, limit: usize, tx: &mpsc::Sender<Inbound>) {
    let mut input = BufReader::with_capacity(BUFFER_BYTES, input);
    let mut splitter = LineSplitter::new(limit);
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
        let (consumed, line) = splitter.feed(chunk);
        let item = line.map(owned);
        input.consume(consumed);
        if let Some(item) = item
            && tx.blocking_send(item).is_err()
        {
            return;
        }
    }
    if let Some(item) = splitter.finish().map(owned) {
        let _ = tx.blocking_send(item);
    }
}

/// A message to hand over a channel.
fn owned(line: Line<'_>) -> Inbound {
    match line {
        Line::Message(message) => Inbound::Message(message.to_vec()),
        Line::TooLarge { limit } => Inbound::TooLarge { limit },
    }
}

/// Writes frames, one per line, until the queue is closed.
pub(crate) fn write_frames(output: impl Write, mut frames: OutboundQueue) -> io::Result<()> {
    let mut output = BufWriter::with_capacity(BUFFER_BYTES, output);
    while let Some(frame) = frames.blocking_recv() {
        if frame.is_empty() {
            break;
        }
        output.write_all(&frame)?;
        output.write_all(b"\n")?;
        loop {
            match frames.try_recv() {
                Some(frame) if frame.is_empty() => return output.flush(),
                Some(frame) => {
                    output.write_all(&frame)?;
                    output.write_all(b"\n")?;
                }
                None => break,
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
