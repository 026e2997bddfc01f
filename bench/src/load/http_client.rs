//! The least HTTP/1.1 client the Streamable HTTP load needs, on std's `TcpStream`: one
//! keep-alive connection with TCP_NODELAY, each request written with one `write`, each
//! response read whole (framed by `Content-Length` or chunked transfer coding), and the SSE
//! events of a `text/event-stream` body split out of it.
//!
//! Nothing here allocates per request once the buffers have grown, so that the driver's own
//! cost stays small and the same for every server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::Result;

const BUFFER_BYTES: usize = 64 * 1024;

/// The media type of a response body, as far as MCP cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Media {
    Json,
    EventStream,
    /// No `Content-Type` (an empty 202, say).
    None,
    Other,
}

/// The status line and the headers of a response that matter here.
#[derive(Debug)]
pub struct Head {
    pub status: u16,
    pub media: Media,
    /// `Mcp-Session-Id`, when the response carries one.
    pub session_id: Option<String>,
}

/// One keep-alive HTTP/1.1 connection to a server.
pub struct Connection {
    stream: BufReader<TcpStream>,
    request: Vec<u8>,
    line: Vec<u8>,
    /// Whether the server said it closes the connection after this response.
    closing: bool,
}

impl Connection {
    /// Connects, with TCP_NODELAY (each request is one write, sent at once) and a read
    /// timeout after which a response that does not come fails the run.
    pub fn open(addr: SocketAddr, timeout: Duration) -> Result<Connection> {
        let tcp = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        tcp.set_nodelay(true)?;
        tcp.set_read_timeout(Some(timeout))?;
        tcp.set_write_timeout(Some(timeout))?;
        Ok(Connection {
            stream: BufReader::with_capacity(BUFFER_BYTES, tcp),
            request: Vec::with_capacity(1024),
            line: Vec::with_capacity(256),
            closing: false,
        })
    }

    /// Sends `POST path` with `headers` (whole `Name: value\r\n` lines, `Host` among them) and
    /// the JSON `body`, then reads the response, its body into `body`.
    pub fn post(
        &mut self,
        path: &str,
        headers: &[u8],
        json: &[u8],
        body: &mut Vec<u8>,
    ) -> Result<Head> {
        if self.closing {
            return Err("the server closed a keep-alive connection (Connection: close)".into());
        }
        self.request.clear();
        self.request.extend_from_slice(b"POST ");
        self.request.extend_from_slice(path.as_bytes());
        self.request.extend_from_slice(b" HTTP/1.1\r\n");
        self.request.extend_from_slice(headers);
        // Writing into a Vec cannot fail.
        let _ = write!(self.request, "Content-Length: {}\r\n\r\n", json.len());
        self.request.extend_from_slice(json);
        self.stream.get_mut().write_all(&self.request)?;
        self.read_response(body)
    }

    fn read_response(&mut self, body: &mut Vec<u8>) -> Result<Head> {
        body.clear();
        self.read_line()?;
        if self.line.is_empty() {
            return Err("the server closed the connection instead of answering".into());
        }
        let status = parse_status(&self.line)?;
        let mut media = Media::None;
        let mut session_id = None;
        let mut length: Option<usize> = None;
        let mut chunked = false;
        loop {
            self.read_line()?;
            let line = trim_crlf(&self.line);
            if line.is_empty() {
                break;
            }
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                return Err(
                    format!("a malformed header: {}", String::from_utf8_lossy(line)).into(),
                );
            };
            let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
            if name.eq_ignore_ascii_case(b"content-type") {
                let essence = value
                    .split(|&b| b == b';')
                    .next()
                    .unwrap_or(b"")
                    .trim_ascii();
                media = if essence.eq_ignore_ascii_case(b"application/json") {
                    Media::Json
                } else if essence.eq_ignore_ascii_case(b"text/event-stream") {
                    Media::EventStream
                } else {
                    Media::Other
                };
            } else if name.eq_ignore_ascii_case(b"content-length") {
                length = Some(
                    std::str::from_utf8(value)
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .ok_or("a Content-Length that is not a number")?,
                );
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                chunked = value
                    .split(|&b| b == b',')
                    .any(|coding| coding.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            } else if name.eq_ignore_ascii_case(b"connection") {
                self.closing = value.eq_ignore_ascii_case(b"close");
            } else if name.eq_ignore_ascii_case(b"mcp-session-id") {
                session_id = Some(String::from_utf8_lossy(value).into_owned());
            }
        }
        if chunked {
            self.read_chunked(body)?;
        } else if let Some(length) = length {
            body.resize(length, 0);
            self.stream.read_exact(body)?;
        } else if !(status == 204 || status == 304 || (100..200).contains(&status)) {
            // Neither framing: the body runs to the end of the connection.
            self.stream.read_to_end(body)?;
            self.closing = true;
        }
        Ok(Head {
            status,
            media,
            session_id,
        })
    }

    fn read_chunked(&mut self, body: &mut Vec<u8>) -> Result<()> {
        loop {
            self.read_line()?;
            let line = trim_crlf(&self.line);
            let size = line
                .split(|&b| b == b';')
                .next()
                .unwrap_or(b"")
                .trim_ascii();
            let size = std::str::from_utf8(size)
                .ok()
                .and_then(|s| usize::from_str_radix(s, 16).ok())
                .ok_or_else(|| format!("not a chunk size: {:?}", String::from_utf8_lossy(line)))?;
            if size == 0 {
                // Trailers, up to the blank line.
                loop {
                    self.read_line()?;
                    if trim_crlf(&self.line).is_empty() {
                        return Ok(());
                    }
                }
            }
            let start = body.len();
            body.resize(start + size, 0);
            self.stream.read_exact(&mut body[start..])?;
            self.read_line()?;
            if !trim_crlf(&self.line).is_empty() {
                return Err("a chunk not followed by CRLF".into());
            }
        }
    }

    /// Reads one line, with its CRLF, into `self.line`; at the end of the connection the
    /// line is empty.
    fn read_line(&mut self) -> Result<()> {
        self.line.clear();
        self.stream.read_until(b'\n', &mut self.line)?;
        Ok(())
    }
}

fn trim_crlf(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn parse_status(line: &[u8]) -> Result<u16> {
    let line = trim_crlf(line);
    line.strip_prefix(b"HTTP/1.1 ")
        .or_else(|| line.strip_prefix(b"HTTP/1.0 "))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| std::str::from_utf8(code).ok())
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| {
            format!(
                "not an HTTP status line: {:?}",
                String::from_utf8_lossy(line)
            )
            .into()
        })
}

/// The data of each event of an SSE body that has any (comments, and events with only `id`
/// or `retry`, such as a priming event, are skipped), with multi-line data joined by `\n`.
/// `data` is scratch space for an event's data.
pub fn for_each_event(
    body: &[u8],
    data: &mut Vec<u8>,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    data.clear();
    let mut has_data = false;
    for line in body.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            // The end of an event.
            if has_data && !data.is_empty() {
                f(data)?;
            }
            data.clear();
            has_data = false;
            continue;
        }
        if let Some(value) = line.strip_prefix(b"data") {
            let value = match value {
                [] => value,
                [b':', b' ', rest @ ..] | [b':', rest @ ..] => rest,
                // Another field whose name starts with "data".
                _ => continue,
            };
            if has_data {
                data.push(b'\n');
            }
            data.extend_from_slice(value);
            has_data = true;
        }
    }
    // An event the stream ended without its blank line is incomplete and not dispatched
    // (as in the EventSource processing model).
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(body: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_event(body.as_bytes(), &mut Vec::new(), |d| {
            out.push(String::from_utf8(d.to_vec()).unwrap());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn events_with_data_are_split_out_and_the_rest_skipped() {
        let body = "id: 0\nretry: 3000\ndata:\n\n: keep-alive\n\n\
                    data: {\"a\":1}\nid: 1\n\ndata:{\"b\":2}\r\n\r\ndata: x\ndata: y\n\ndata: lost";
        assert_eq!(events(body), ["{\"a\":1}", "{\"b\":2}", "x\ny"]);
    }

    #[test]
    fn status_lines_are_read() {
        assert_eq!(parse_status(b"HTTP/1.1 202 Accepted\r\n").unwrap(), 202);
        assert!(parse_status(b"SSH-2.0\r\n").is_err());
    }
}
