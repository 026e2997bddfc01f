//! The ceiling: the least a stdio MCP server can do to answer `echo` and `add`, written by hand
//! on serde_json with no async runtime, no framework and no validation beyond what the answer
//! needs.
//!
//! One thread reads a line, answers it into a buffer, and writes the buffer out only when no
//! further input is already waiting, so a burst of requests costs one `write` system call.
//! Its `tools/call` results are byte for byte what `bench-server` sends.

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

const BUFFER_BYTES: usize = 64 * 1024;

const TOOLS: &str = r#"{"tools":[{"annotations":{"idempotentHint":true,"readOnlyHint":true},"description":"Add two integers (wrapping on overflow).","inputSchema":{"additionalProperties":false,"properties":{"a":{"description":"The first addend.","format":"int64","type":"integer"},"b":{"description":"The second addend.","format":"int64","type":"integer"}},"required":["a","b"],"type":"object"},"name":"add"},{"annotations":{"idempotentHint":true,"readOnlyHint":true},"description":"Return the text unchanged.","inputSchema":{"additionalProperties":false,"properties":{"text":{"description":"The text to return.","type":"string"}},"required":["text"],"type":"object"},"name":"echo"}]}"#;

const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct InitializeParams<'a> {
    #[serde(borrow, rename = "protocolVersion")]
    protocol_version: Cow<'a, str>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct EchoArgs<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
}

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn main() -> io::Result<()> {
    let mut input = BufReader::with_capacity(BUFFER_BYTES, io::stdin().lock());
    // Standard output's own writer flushes at every newline; write to the descriptor instead.
    let mut output = BufWriter::with_capacity(BUFFER_BYTES, raw_stdout()?);
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        answer(&line, &mut output)?;
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

#[cfg(unix)]
fn raw_stdout() -> io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(io::stdout().as_fd().try_clone_to_owned()?.into())
}

#[cfg(not(unix))]
fn raw_stdout() -> io::Result<io::Stdout> {
    Ok(io::stdout())
}

/// Writes the response to one line, if it needs one.
fn answer(line: &[u8], out: &mut impl Write) -> io::Result<()> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Ok(());
    }
    let request: Request<'_> = match serde_json::from_slice(line) {
        Ok(request) => request,
        Err(e) => return error(out, None, -32700, &format!("invalid JSON: {e}")),
    };
    // Notifications need no answer.
    let Some(id) = request.id else {
        return Ok(());
    };
    let params = request.params.map_or("{}", RawValue::get);
    match &*request.method {
        "tools/call" => match serde_json::from_str::<CallParams<'_>>(params) {
            Ok(call) => call_tool(out, id, &call),
            Err(e) => error(out, Some(id), -32602, &format!("invalid params: {e}")),
        },
        "initialize" => {
            let requested = serde_json::from_str::<InitializeParams<'_>>(params)
                .map(|p| p.protocol_version.into_owned())
                .unwrap_or_default();
            let version = SUPPORTED_VERSIONS
                .into_iter()
                .find(|v| *v == requested)
                .unwrap_or(SUPPORTED_VERSIONS[3]);
            let result = format!(
                r#"{{"capabilities":{{"tools":{{"listChanged":false}}}},"protocolVersion":"{version}","serverInfo":{{"name":"ceiling-server","version":"0.0.0"}}}}"#
            );
            respond(out, id, &result)
        }
        "tools/list" => respond(out, id, TOOLS),
        "ping" => respond(out, id, "{}"),
        other => error(
            out,
            Some(id),
            -32601,
            &format!("method not found: `{other}`"),
        ),
    }
}

fn call_tool(out: &mut impl Write, id: &RawValue, call: &CallParams<'_>) -> io::Result<()> {
    let arguments = call.arguments.map_or("{}", RawValue::get);
    let text = match &*call.name {
        "echo" => serde_json::from_str::<EchoArgs<'_>>(arguments).map(|a| a.text),
        "add" => serde_json::from_str::<AddArgs>(arguments)
            .map(|a| Cow::Owned(a.a.wrapping_add(a.b).to_string())),
        other => return error(out, Some(id), -32602, &format!("unknown tool `{other}`")),
    };
    match text {
        Ok(text) => {
            write!(
                out,
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"#,
                id.get()
            )?;
            serde_json::to_writer(&mut *out, &text)?;
            out.write_all(b"}]}}\n")
        }
        Err(e) => {
            write!(
                out,
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"#,
                id.get()
            )?;
            serde_json::to_writer(&mut *out, &format!("invalid arguments: {e}"))?;
            out.write_all(b"}],\"isError\":true}}\n")
        }
    }
}

fn respond(out: &mut impl Write, id: &RawValue, result: &str) -> io::Result<()> {
    writeln!(
        out,
        r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
        id.get()
    )
}

fn error(out: &mut impl Write, id: Option<&RawValue>, code: i32, message: &str) -> io::Result<()> {
    let id = id.map_or("null", RawValue::get);
    write!(
        out,
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"#
    )?;
    serde_json::to_writer(&mut *out, message)?;
    out.write_all(b"}}\n")
}
