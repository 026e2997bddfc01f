//! What the driver asks and what it expects back, whatever carries the bytes: the
//! `initialize` handshake (or, in the stateless era, `server/discover`) and `tools/call`
//! requests of the `echo` and `echo_progress` tools, each reply checked against the text its
//! request sent.

use std::borrow::Cow;
use std::io::Write;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::Result;

/// The protocol revision the driver asks for over stdio; every server under test speaks it.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// The revision of the handshake era the driver asks for over Streamable HTTP.
pub const SESSION_VERSION: &str = "2025-11-25";

/// The stateless revision: no handshake, every request carries its `_meta`.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// The id of the `initialize` request; calls are numbered from 1.
pub const INITIALIZE_ID: u64 = 0;

/// The `initialize` request at [`PROTOCOL_VERSION`], one line.
pub fn initialize_request() -> String {
    initialize_request_at(PROTOCOL_VERSION)
}

/// The `initialize` request at a revision, one line.
pub fn initialize_request_at(version: &str) -> String {
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"initialize","params":{{"protocolVersion":"{}","#,
            r#""capabilities":{{}},"clientInfo":{{"name":"mcp-load","version":"{}"}}}}}}"#,
            "\n"
        ),
        INITIALIZE_ID,
        version,
        env!("CARGO_PKG_VERSION")
    )
}

/// The `server/discover` request of the stateless era with the id of `initialize`, one line.
pub fn discover_request() -> String {
    let mut out = Vec::new();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    let _ = write!(out, "{INITIALIZE_ID}");
    out.extend_from_slice(br#","method":"server/discover","params":{"_meta":"#);
    write_stateless_meta(None, &mut out);
    out.extend_from_slice(b"}}\n");
    String::from_utf8(out).unwrap_or_default()
}

/// The notification that completes the handshake, one line.
pub const INITIALIZED_NOTIFICATION: &str =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// Checks the reply to `initialize` at [`PROTOCOL_VERSION`].
pub fn check_initialize_reply(line: &[u8]) -> Result<()> {
    check_initialize_reply_at(line, PROTOCOL_VERSION)
}

/// Checks the reply to `initialize`: a result for id 0 with the protocol version asked for.
pub fn check_initialize_reply_at(line: &[u8], version: &str) -> Result<()> {
    #[derive(Deserialize)]
    struct Initialized<'a> {
        id: u64,
        #[serde(borrow)]
        result: Option<InitializeResult<'a>>,
        #[serde(borrow)]
        error: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct InitializeResult<'a> {
        #[serde(borrow, rename = "protocolVersion")]
        protocol_version: Cow<'a, str>,
    }
    let reply: Initialized<'_> = serde_json::from_slice(line)
        .map_err(|e| format!("unreadable reply to initialize ({e}): {}", lossy(line)))?;
    match (reply.id, reply.result, reply.error) {
        (INITIALIZE_ID, Some(result), None) if result.protocol_version == version => Ok(()),
        _ => Err(format!("unexpected reply to initialize: {}", lossy(line)).into()),
    }
}

/// Checks the reply to `server/discover`: a result for id 0.
pub fn check_discover_reply(message: &[u8]) -> Result<()> {
    #[derive(Deserialize)]
    struct Discovered<'a> {
        id: u64,
        #[serde(borrow)]
        result: Option<&'a RawValue>,
        #[serde(borrow)]
        error: Option<&'a RawValue>,
    }
    let reply: Discovered<'_> = serde_json::from_slice(message).map_err(|e| {
        format!(
            "unreadable reply to server/discover ({e}): {}",
            lossy(message)
        )
    })?;
    match (reply.id, reply.result, reply.error) {
        (INITIALIZE_ID, Some(_), None) => Ok(()),
        _ => Err(format!("unexpected reply to server/discover: {}", lossy(message)).into()),
    }
}

/// Writes the `tools/call` request of `echo` with this id, one line.
pub fn write_echo_request(id: u64, out: &mut Vec<u8>) {
    write_call_request(id, "echo", false, false, out);
}

/// Writes a `tools/call` request of `tool` (`echo` or `echo_progress`) with this id, one line:
/// with `progress`, its `_meta` asks for progress with the id as the token; with `stateless`,
/// its `_meta` carries what every request of the stateless era must.
pub fn write_call_request(id: u64, tool: &str, progress: bool, stateless: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{id}");
    out.extend_from_slice(br#","method":"tools/call","params":{"name":""#);
    out.extend_from_slice(tool.as_bytes());
    out.extend_from_slice(br#"","arguments":{"text":""#);
    write_echo_text(id, out);
    out.extend_from_slice(b"\"}");
    if progress || stateless {
        out.extend_from_slice(br#","_meta":"#);
        if stateless {
            write_stateless_meta(progress.then_some(id), out);
        } else {
            let _ = write!(out, r#"{{"progressToken":{id}}}"#);
        }
    }
    out.extend_from_slice(b"}}\n");
}

/// The `_meta` object of a stateless-era request, with a progress token if given.
fn write_stateless_meta(progress_token: Option<u64>, out: &mut Vec<u8>) {
    out.push(b'{');
    if let Some(token) = progress_token {
        let _ = write!(out, r#""progressToken":{token},"#);
    }
    let _ = write!(
        out,
        concat!(
            r#""io.modelcontextprotocol/protocolVersion":"{}","#,
            r#""io.modelcontextprotocol/clientInfo":{{"name":"mcp-load","version":"{}"}},"#,
            r#""io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        ),
        STATELESS_VERSION,
        env!("CARGO_PKG_VERSION")
    );
}

/// The text sent to `echo` by the call with this id: different for every call, so that a
/// reply given to the wrong request cannot pass, and as long as a short tool argument.
fn write_echo_text(id: u64, out: &mut Vec<u8>) {
    let _ = write!(
        out,
        "call {id}: the quick brown fox jumps over the lazy dog"
    );
}

/// One message read back while calls are in flight.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// A correct reply to the call with this id.
    Answer(u64),
    /// A progress notification with this (numeric) token.
    Progress(u64),
    /// A message that answers no call (another notification or a request from the server).
    Other,
}

/// Checks one message against the call its id names: exactly one text block holding the text
/// that call sent, and no error.
pub fn check_echo_reply(line: &[u8], scratch: &mut Vec<u8>) -> Result<Reply> {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
        #[serde(borrow)]
        result: Option<ToolResult<'a>>,
        #[serde(borrow)]
        error: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct ToolResult<'a> {
        #[serde(borrow)]
        content: Vec<Block<'a>>,
        #[serde(default, rename = "isError")]
        is_error: bool,
    }
    #[derive(Deserialize)]
    struct Block<'a> {
        #[serde(borrow, rename = "type")]
        kind: Cow<'a, str>,
        #[serde(borrow)]
        text: Option<Cow<'a, str>>,
    }
    #[derive(Deserialize)]
    struct ProgressParams<'a> {
        #[serde(borrow, rename = "progressToken")]
        progress_token: &'a RawValue,
    }
    let message: Message<'_> = serde_json::from_slice(line)
        .map_err(|e| format!("unreadable message ({e}): {}", lossy(line)))?;
    match message.method.as_deref() {
        Some("notifications/progress") => {
            return message
                .params
                .and_then(|p| serde_json::from_str::<ProgressParams<'_>>(p.get()).ok())
                .and_then(|p| p.progress_token.get().parse::<u64>().ok())
                .map(Reply::Progress)
                .ok_or_else(|| {
                    format!("a progress notification with no token: {}", lossy(line)).into()
                });
        }
        Some(_) => return Ok(Reply::Other),
        None => {}
    }
    let id = message
        .id
        .and_then(|id| id.get().parse::<u64>().ok())
        .ok_or_else(|| format!("a reply with no call id: {}", lossy(line)))?;
    if let Some(error) = message.error {
        return Err(format!("call {id} failed: {}", error.get()).into());
    }
    let result = message
        .result
        .ok_or_else(|| format!("a reply with neither result nor error: {}", lossy(line)))?;
    scratch.clear();
    write_echo_text(id, scratch);
    let correct = !result.is_error
        && result.content.len() == 1
        && result.content[0].kind == "text"
        && result.content[0].text.as_deref().map(str::as_bytes) == Some(&scratch[..]);
    if correct {
        Ok(Reply::Answer(id))
    } else {
        Err(format!("wrong reply to call {id}: {}", lossy(line)).into())
    }
}

/// At most the first 300 characters of a message, for error messages.
pub fn lossy(line: &[u8]) -> Cow<'_, str> {
    const SHOWN: usize = 300;
    let text = String::from_utf8_lossy(line.trim_ascii_end());
    if text.len() > SHOWN {
        let cut = (0..=SHOWN)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        Cow::Owned(format!("{}…", &text[..cut]))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_one_line_of_valid_json() {
        let mut line = Vec::new();
        write_echo_request(7, &mut line);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            v["params"]["arguments"]["text"],
            "call 7: the quick brown fox jumps over the lazy dog"
        );
        let v: serde_json::Value = serde_json::from_str(&initialize_request()).unwrap();
        assert_eq!(v["params"]["protocolVersion"], PROTOCOL_VERSION);
    }

    #[test]
    fn the_echo_of_the_right_text_is_an_answer() {
        let reply = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"call 7: the quick brown fox jumps over the lazy dog"}],"isError":false}}"#;
        assert!(matches!(
            check_echo_reply(reply, &mut Vec::new()),
            Ok(Reply::Answer(7))
        ));
    }

    #[test]
    fn the_text_of_another_call_is_wrong() {
        let reply = br#"{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"call 7: the quick brown fox jumps over the lazy dog"}]}}"#;
        assert!(check_echo_reply(reply, &mut Vec::new()).is_err());
    }

    #[test]
    fn tool_errors_and_protocol_errors_are_wrong() {
        let tool_error = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"call 7: the quick brown fox jumps over the lazy dog"}],"isError":true}}"#;
        assert!(check_echo_reply(tool_error, &mut Vec::new()).is_err());
        let rpc_error = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#;
        assert!(check_echo_reply(rpc_error, &mut Vec::new()).is_err());
    }

    #[test]
    fn calls_carry_the_meta_their_workload_needs() {
        let mut line = Vec::new();
        write_call_request(9, "echo_progress", true, false, &mut line);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["params"]["name"], "echo_progress");
        assert_eq!(
            v["params"]["_meta"],
            serde_json::json!({"progressToken": 9})
        );

        line.clear();
        write_call_request(10, "echo", false, true, &mut line);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        let meta = &v["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            STATELESS_VERSION
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            serde_json::json!({})
        );
        assert!(meta.get("progressToken").is_none());

        line.clear();
        write_call_request(11, "echo_progress", true, true, &mut line);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["params"]["_meta"]["progressToken"], 11);
        assert_eq!(
            v["params"]["arguments"]["text"],
            "call 11: the quick brown fox jumps over the lazy dog"
        );

        let v: serde_json::Value = serde_json::from_str(&discover_request()).unwrap();
        assert_eq!(v["method"], "server/discover");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            STATELESS_VERSION
        );
    }

    #[test]
    fn progress_notifications_name_their_token() {
        let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":12,"progress":1.0,"total":1.0}}"#;
        assert_eq!(
            check_echo_reply(progress, &mut Vec::new()).unwrap(),
            Reply::Progress(12)
        );
        let tokenless =
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#;
        assert!(check_echo_reply(tokenless, &mut Vec::new()).is_err());
    }

    #[test]
    fn notifications_answer_no_call() {
        let log = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
        assert!(matches!(
            check_echo_reply(log, &mut Vec::new()),
            Ok(Reply::Other)
        ));
    }
}
