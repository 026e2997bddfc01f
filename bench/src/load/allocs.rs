//! Heap allocations per `tools/call` of `echo` over stdio, counted by the global allocator of
//! `alloc-server` (mcp-runtime, like `bench-server`), which its tool `allocations` reports.
//!
//! After a warm-up, the counts are read twice in a row (the difference is what reading them
//! costs), then the calls are made one at a time, then the counts are read once more: what
//! the calls allocated is the last reading less the second and less the cost of a reading.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;

use crate::Result;
use crate::process::{ServerCommand, ServerProcess};
use crate::workload;

/// What one `echo` call allocates, on average over the measured calls.
#[derive(Clone, Debug)]
pub struct PerCall {
    /// The build measured (`stdio-only`, `http`).
    pub build: &'static str,
    pub allocations: f64,
    pub bytes: f64,
}

/// Counts one server's allocations per call over `calls` calls after `warmup` others.
pub fn measure(
    build: &'static str,
    server: &ServerCommand,
    warmup: usize,
    calls: usize,
) -> Result<PerCall> {
    let mut command = server.command();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let process = ServerProcess::spawn(command, Duration::from_secs(120))?;
    let mut input = BufWriter::new(process.take(|c| c.stdin.take())?);
    let mut output = BufReader::new(process.take(|c| c.stdout.take())?);

    input.write_all(workload::initialize_request().as_bytes())?;
    input.flush()?;
    let mut line = Vec::new();
    output.read_until(b'\n', &mut line)?;
    workload::check_initialize_reply(&line)?;
    input.write_all(workload::INITIALIZED_NOTIFICATION.as_bytes())?;

    let mut next_id = workload::INITIALIZE_ID + 1;
    crate::stdio::call(&mut input, &mut output, next_id, warmup, 1)?;
    next_id += warmup as u64;
    let first = counts(&mut input, &mut output, next_id)?;
    let second = counts(&mut input, &mut output, next_id + 1)?;
    next_id += 2;
    let reading = (second.0 - first.0, second.1 - first.1);
    crate::stdio::call(&mut input, &mut output, next_id, calls, 1)?;
    next_id += calls as u64;
    let last = counts(&mut input, &mut output, next_id)?;

    crate::stdio::close_and_wait(process, input, output)?;
    let per_call = |last: u64, before: u64, reading: u64| {
        last.saturating_sub(before).saturating_sub(reading) as f64 / calls.max(1) as f64
    };
    Ok(PerCall {
        build,
        allocations: per_call(last.0, second.0, reading.0),
        bytes: per_call(last.1, second.1, reading.1),
    })
}

/// Calls `allocations` and reads its answer: (allocations, bytes) so far.
fn counts(input: &mut impl Write, output: &mut impl BufRead, id: u64) -> Result<(u64, u64)> {
    #[derive(Deserialize)]
    struct Reply {
        id: u64,
        result: CallResult,
    }
    #[derive(Deserialize)]
    struct CallResult {
        content: [Text; 1],
    }
    #[derive(Deserialize)]
    struct Text {
        text: String,
    }
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"allocations","arguments":{{}}}}}}"#
    )?;
    input.flush()?;
    let mut line = Vec::new();
    output.read_until(b'\n', &mut line)?;
    let reply: Reply = serde_json::from_slice(&line).map_err(|e| {
        format!(
            "unexpected reply to `allocations` ({e}): {} (is the server alloc-server?)",
            workload::lossy(&line)
        )
    })?;
    let [Text { text }] = reply.result.content;
    match text.split_once(' ').map(|(a, b)| (a.parse(), b.parse())) {
        Some((Ok(allocations), Ok(bytes))) if reply.id == id => Ok((allocations, bytes)),
        _ => Err(format!("unexpected counts from `allocations`: {text:?}").into()),
    }
}
