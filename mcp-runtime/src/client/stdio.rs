//! A server run as a child process, spoken to over its standard input and output, one JSON
//! message per line. Lines are written by one task, from a bounded queue, so that a sender
//! that gives up (its timeout) never leaves half a line behind, and a server that stops
//! reading holds at most the queue. Closing ends its input, gives it two seconds to exit,
//! then kills it; a child still running when the client is dropped is killed.

use std::process::Stdio as Piped;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt as _, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{Mutex, mpsc};

use super::CallError;
use super::engine::Engine;

/// The longest line read from the server.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// How many lines wait for the server to read its input before a sender waits too.
const QUEUED_LINES: usize = 64;

pub(crate) struct Stdio {
    /// The lines to write, until the connection is closed.
    input: std::sync::Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    child: Mutex<Option<Child>>,
}

impl Stdio {
    /// Starts `command` with piped standard input and output, and reads what it writes into
    /// `engine`.
    pub(crate) fn spawn(mut command: Command, engine: &Arc<Engine>) -> Result<Self, CallError> {
        command
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .kill_on_drop(true);
        let program = format!("{:?}", command.as_std().get_program());
        let mut child = command
            .spawn()
            .map_err(|e| CallError::Transport(format!("could not start {program}: {e}")))?;
        let input = child.stdin.take().expect("stdin is piped");
        let output = child.stdout.take().expect("stdout is piped");
        let weak = Arc::downgrade(engine);
        let shutdown = engine.shutdown.clone();
        let (lines, queued) = mpsc::channel(QUEUED_LINES);
        tokio::spawn(write(input, queued, shutdown.clone()));
        tokio::spawn(async move {
            tokio::select! {
                reason = read(output, weak.clone()) => {
                    if let Some(engine) = weak.upgrade() {
                        engine.close(&reason);
                    }
                }
                () = shutdown.cancelled() => {}
            }
        });
        Ok(Stdio {
            input: std::sync::Mutex::new(Some(lines)),
            child: Mutex::new(Some(child)),
        })
    }

    pub(crate) async fn send(&self, message: &Value) -> Result<(), CallError> {
        let mut line = serde_json::to_vec(message).expect("a JSON value serialises");
        line.push(b'\n');
        let lines = self
            .input
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| CallError::Closed("the connection is closed".into()))?;
        lines
            .send(line)
            .await
            .map_err(|_| CallError::Closed("the server's input is closed".into()))
    }

    pub(crate) async fn close(&self) {
        // The writer ends the child's input once the lines queued are written.
        self.input.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(mut child) = self.child.lock().await.take() else {
            return;
        };
        if tokio::time::timeout(Duration::from_secs(2), child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

/// Writes the queued lines to the child's input, whole, until the queue is closed, the
/// input breaks or the engine is gone; then closes the input.
async fn write(
    mut input: ChildStdin,
    mut lines: mpsc::Receiver<Vec<u8>>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let written = async {
        while let Some(line) = lines.recv().await {
            input.write_all(&line).await?;
            input.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    };
    tokio::select! {
        outcome = written => {
            if let Err(error) = outcome {
                tracing::debug!(%error, "the server's input is closed");
            }
        }
        () = shutdown.cancelled() => {}
    }
}

/// Reads lines until the output ends; returns why it ended.
async fn read(output: tokio::process::ChildStdout, engine: Weak<Engine>) -> String {
    let mut reader = BufReader::new(output);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) => return "the server's output ended".into(),
            Err(e) => return format!("the server's output could not be read: {e}"),
            Ok(_) if line.len() > MAX_LINE => {
                return "the server wrote a line longer than 64 MiB".into();
            }
            Ok(_) => {}
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let Some(engine) = engine.upgrade() else {
            return "the client is gone".into();
        };
        match serde_json::from_slice::<Value>(text) {
            Ok(message) => engine.receive(message),
            Err(e) => tracing::warn!(error = %e, "the server wrote a line that is not JSON"),
        }
    }
}
