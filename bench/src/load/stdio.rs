//! The stdio transport of the driver: spawn the server with piped standard streams, time the
//! handshake, then keep a fixed number of `tools/call`s in flight on the pipe.
//!
//! A writer thread sends a request whenever a slot is free (writing every request a free slot
//! allows before it flushes), and the reader thread, on each reply, checks it, records its
//! latency against the time its request was written, and frees a slot.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::Result;
use crate::process::{ServerCommand, ServerProcess, describe_exit};
use crate::run::{Bodies, CallTimes, Plan, RunOutcome};
use crate::workload::{self, Reply};

const PIPE_BUFFER_BYTES: usize = 64 * 1024;

/// One run against a server over stdio: cold start, a warm-up, the measured calls, peak
/// memory, and a clean exit on end of input.
pub fn run(server: &ServerCommand, plan: &Plan) -> Result<RunOutcome> {
    let spawned = Instant::now();
    let process = ServerProcess::spawn(server.stdio_command(), plan.deadline)?;
    let mut input = BufWriter::with_capacity(PIPE_BUFFER_BYTES, process.take(|c| c.stdin.take())?);
    let mut output =
        BufReader::with_capacity(PIPE_BUFFER_BYTES, process.take(|c| c.stdout.take())?);

    input.write_all(workload::initialize_request().as_bytes())?;
    input.flush()?;
    let mut line = Vec::new();
    if output.read_until(b'\n', &mut line)? == 0 {
        return Err("the server closed its output before answering initialize".into());
    }
    let cold_start = spawned.elapsed();
    workload::check_initialize_reply(&line)?;
    input.write_all(workload::INITIALIZED_NOTIFICATION.as_bytes())?;

    let mut next_id = workload::INITIALIZE_ID + 1;
    if plan.warmup > 0 {
        call(
            &mut input,
            &mut output,
            next_id,
            plan.warmup,
            plan.concurrency,
        )?;
        next_id += plan.warmup as u64;
    }
    let mut calls = CallTimes {
        wall: Duration::ZERO,
        latencies_ns: Vec::with_capacity(plan.calls),
    };
    let mut rss_kib = Vec::new();
    let mut done = 0;
    for part in plan.parts() {
        calls.extend(call(
            &mut input,
            &mut output,
            next_id,
            part,
            plan.concurrency,
        )?);
        next_id += part as u64;
        done += part;
        if plan.checkpoints > 0 {
            rss_kib.push((done, process.rss_kib()));
        }
    }

    let peak_rss_kib = process.peak_rss_kib();
    let peak_anon_kib = process.peak_anon_kib();
    close_and_wait(process, input, output)?;
    Ok(RunOutcome {
        cold_start,
        calls,
        peak_rss_kib,
        peak_anon_kib,
        bodies: Bodies::default(),
        rss_kib,
    })
}

/// Closes the server's input and waits for it to exit cleanly. Whatever it still writes is not
/// a reply to a call; it is drained so that the server cannot block on a full pipe while
/// exiting.
pub fn close_and_wait(
    process: ServerProcess,
    input: impl Write,
    mut output: impl Read + Send + 'static,
) -> Result<()> {
    drop(input);
    let drain = std::thread::spawn(move || std::io::copy(&mut output, &mut std::io::sink()));
    let status = process.wait(Duration::from_secs(10))?;
    let _ = drain.join();
    match describe_exit(status) {
        Some(problem) => Err(problem.into()),
        None => Ok(()),
    }
}

/// Sends `count` calls with ids from `first_id` on, at most `concurrency` in flight, and
/// checks every reply.
pub fn call(
    input: &mut (impl Write + Send),
    output: &mut impl BufRead,
    first_id: u64,
    count: usize,
    concurrency: usize,
) -> Result<CallTimes> {
    let sent_at: Vec<AtomicU64> = (0..count).map(|_| AtomicU64::new(0)).collect();
    let sent_at = &sent_at[..];
    let (free_slot, slots) = mpsc::sync_channel::<()>(concurrency);
    for _ in 0..concurrency {
        free_slot.send(())?;
    }
    let epoch = Instant::now();
    std::thread::scope(|scope| {
        let writer = std::thread::Builder::new()
            .name("mcp-load-writer".into())
            .spawn_scoped(scope, move || -> Result<()> {
                let mut line = Vec::with_capacity(256);
                let mut next = 0;
                while next < count {
                    // The reader has stopped (it failed): nothing more to send.
                    if slots.recv().is_err() {
                        return Ok(());
                    }
                    loop {
                        line.clear();
                        workload::write_echo_request(first_id + next as u64, &mut line);
                        sent_at[next].store(nanos_since(epoch), Ordering::Release);
                        input.write_all(&line)?;
                        next += 1;
                        if next == count || slots.try_recv().is_err() {
                            break;
                        }
                    }
                    input.flush()?;
                }
                Ok(())
            })?;
        let read = read_replies(output, first_id, count, sent_at, epoch, free_slot);
        let written = writer.join().map_err(|_| "the writer thread panicked")?;
        let times = read?;
        written?;
        Ok(times)
    })
}

fn read_replies(
    output: &mut impl BufRead,
    first_id: u64,
    count: usize,
    sent_at: &[AtomicU64],
    epoch: Instant,
    free_slot: mpsc::SyncSender<()>,
) -> Result<CallTimes> {
    let mut latencies_ns = Vec::with_capacity(count);
    let mut answered = vec![false; count];
    let mut line = Vec::with_capacity(256);
    let mut scratch = Vec::with_capacity(128);
    while latencies_ns.len() < count {
        line.clear();
        if output.read_until(b'\n', &mut line)? == 0 {
            return Err(format!(
                "the server closed its output after {} of {count} replies",
                latencies_ns.len()
            )
            .into());
        }
        let received = nanos_since(epoch);
        let id = match workload::check_echo_reply(&line, &mut scratch)? {
            Reply::Answer(id) => id,
            Reply::Progress(_) | Reply::Other => continue,
        };
        let index = id
            .checked_sub(first_id)
            .map(|i| i as usize)
            .filter(|&i| i < count && !answered[i])
            .ok_or_else(|| format!("a reply to call {id}, which is not in flight"))?;
        answered[index] = true;
        latencies_ns.push(received.saturating_sub(sent_at[index].load(Ordering::Acquire)));
        // The writer may have finished; a slot nobody takes is fine.
        let _ = free_slot.try_send(());
    }
    Ok(CallTimes {
        wall: epoch.elapsed(),
        latencies_ns,
    })
}

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
