//! Server-Sent Events framing (the `text/event-stream` format of the HTML standard), for the
//! events this transport sends: one message per event, an id for resumption, a `retry`, an
//! event type for the legacy transport, and comments that keep a quiet stream alive.
//!
//! Written here rather than with axum's `sse::Event`: the priming event of a resumable
//! stream (SEP-1699) is an id with an *empty* `data` field, which `Event::data("")` leaves
//! out, and every event's data is one line of JSON already, which needs no splitting.

use axum::body::Bytes;

/// An event: optional id, optional event type, and one line of data (a JSON-RPC message,
/// or empty).
pub(super) fn event(id: Option<&str>, kind: Option<&str>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + id.map_or(0, str::len) + 32);
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    if let Some(kind) = kind {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(kind.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The priming event of a resumable stream: its position and the reconnection delay, with
/// empty data.
pub(super) fn priming(id: &str, retry_ms: u128) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"))
}

/// A lone `retry` field: the reconnection delay, announced as a stream is closed early.
pub(super) fn retry(retry_ms: u128) -> Bytes {
    Bytes::from(format!("retry: {retry_ms}\n\n"))
}

/// A comment that carries nothing, so intermediaries keep a quiet stream open and a client
/// that is gone is noticed by the write that fails.
pub(super) const KEEP_ALIVE: Bytes = Bytes::from_static(b":\n\n");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_framed_as_the_standard_says() {
        assert_eq!(
            &event(Some("s:3"), None, b"{}")[..],
            b"id: s:3\ndata: {}\n\n"
        );
        assert_eq!(
            &event(None, Some("endpoint"), b"messages?sessionId=a")[..],
            b"event: endpoint\ndata: messages?sessionId=a\n\n"
        );
        assert_eq!(
            &priming("s:0", 1000)[..],
            b"id: s:0\nretry: 1000\ndata: \n\n"
        );
        assert_eq!(&retry(50)[..], b"retry: 50\n\n");
    }
}
