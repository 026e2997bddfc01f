//! The ceiling: the least an MCP server can do to answer `echo` and `add`, written by hand on
//! serde_json with no framework and no validation beyond what the answer needs.
//!
//! Over stdio (the default) there is no async runtime either: one thread reads a line, answers
//! it into a buffer, and writes the buffer out only when no further input is already waiting,
//! so a burst of requests costs one `write` system call.
//!
//! With `--http ADDR` (this crate's `http` feature) it is bare hyper on Tokio's multi-threaded
//! scheduler: HTTP/1.1 keep-alive with `TCP_NODELAY` on every connection; each POST carries one
//! JSON-RPC message and is answered with one JSON body (202 and no body for a notification),
//! every response with the same fixed `Mcp-Session-Id`. No routing, no session table, no
//! header checks, no SSE: it answers `initialize` and `server/discover` (which open the
//! benchmark's two HTTP eras) and `echo`, not `echo_progress`. SIGTERM stops it.
//!
//! Its `tools/call` results are byte for byte what `bench-server` sends.

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

const BUFFER_BYTES: usize = 64 * 1024;

const TOOLS: &str = r#"{"tools":[{"annotations":{"idempotentHint":true,"readOnlyHint":true},"description":"Add two integers (wrapping on overflow).","inputSchema":{"additionalProperties":false,"properties":{"a":{"description":"The first addend.","format":"int64","type":"integer"},"b":{"description":"The second addend.","format":"int64","type":"integer"}},"required":["a","b"],"type":"object"},"name":"add"},{"annotations":{"idempotentHint":true,"readOnlyHint":true},"description":"Return the text unchanged.","inputSchema":{"additionalProperties":false,"properties":{"text":{"description":"The text to return.","type":"string"}},"required":["text"],"type":"object"},"name":"echo"}]}"#;

const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The session id of every HTTP response.
#[cfg(feature = "http")]
const SESSION_ID: &str = "ceiling-0000000000000000000000000000";

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
    let mut args = std::env::args().skip(1);
    match (args.next(), args.next(), args.next()) {
        (None, ..) => serve_stdio(),
        (Some(flag), Some(addr), None) if flag == "--http" => http::serve(&addr),
        _ => Err(io::Error::other(
            "usage: ceiling-server [--http ADDR] (stdio without arguments)",
        )),
    }
}

fn serve_stdio() -> io::Result<()> {
    grow_pipes();
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

/// Standard input and output hold a megabyte each when they are pipes (as mcp-runtime asks
/// for on Linux): a large message then crosses in one piece, not in 64 KiB round trips.
#[cfg(target_os = "linux")]
fn grow_pipes() {
    for fd in [0, 1] {
        // SAFETY: F_SETPIPE_SZ changes nothing but a pipe's capacity; fails on a non-pipe.
        let _ = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, 1 << 20) };
    }
}

#[cfg(not(target_os = "linux"))]
fn grow_pipes() {}

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
        "server/discover" => respond(
            out,
            id,
            r#"{"capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"ceiling-server","version":"0.0.0"},"supportedVersions":["2026-07-28"]}"#,
        ),
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

#[cfg(feature = "http")]
mod http {
    use std::convert::Infallible;
    use std::io;

    use http_body_util::{BodyExt, Full};
    use hyper::body::{Bytes, Incoming};
    use hyper::header::{CONTENT_TYPE, HeaderValue};
    use hyper::{Request, Response, StatusCode};
    use hyper_util::rt::TokioIo;

    /// Serves until SIGTERM, saying where on standard error as `bench-server` does.
    pub fn serve(addr: &str) -> io::Result<()> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "mcp: serving Streamable HTTP on http://{}/mcp",
                listener.local_addr()?
            );
            let mut terminate = terminate()?;
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        stream.set_nodelay(true)?;
                        tokio::spawn(async move {
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(
                                    TokioIo::new(stream),
                                    hyper::service::service_fn(handle),
                                )
                                .await;
                        });
                    }
                    _ = &mut terminate => return Ok(()),
                }
            }
        })
    }

    async fn handle(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
        let body = match request.into_body().collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
        };
        let mut out = Vec::with_capacity(256);
        if super::answer(&body, &mut out).is_err() {
            return Ok(status(StatusCode::INTERNAL_SERVER_ERROR));
        }
        if out.is_empty() {
            return Ok(status(StatusCode::ACCEPTED));
        }
        out.pop(); // the newline that ends a message on stdio
        let mut response = Response::new(Full::new(Bytes::from(out)));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            "mcp-session-id",
            HeaderValue::from_static(super::SESSION_ID),
        );
        Ok(response)
    }

    fn status(code: StatusCode) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = code;
        response
    }

    #[cfg(unix)]
    fn terminate() -> io::Result<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> {
        let mut signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        Ok(Box::pin(async move {
            signal.recv().await;
        }))
    }

    #[cfg(not(unix))]
    fn terminate() -> io::Result<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> {
        Ok(Box::pin(async {
            let _ = tokio::signal::ctrl_c().await;
        }))
    }
}

#[cfg(not(feature = "http"))]
mod http {
    pub fn serve(_addr: &str) -> std::io::Result<()> {
        Err(std::io::Error::other(
            "this ceiling-server was built without HTTP (the `http` feature of mcp-bench)",
        ))
    }
}
