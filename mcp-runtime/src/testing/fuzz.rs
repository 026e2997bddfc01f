//! A synchronous entry point into the dispatch of messages, for fuzzers and property tests:
//! [`Dispatcher`].

use crate::protocol::Frame;
use crate::server::Server;
use crate::session::{Outbound, OutboundQueue};
use crate::transport::connection::{Connection, Line};

/// How many times the calls that wait are let run after a message, so that those that only
/// yield (and do not wait for a timer or the client) are answered before `dispatch` returns.
const SETTLE_ROUNDS: usize = 8;

/// One connection to a server, driven one raw message at a time without a transport: each
/// message goes through the same routing as a line read from standard input, and the frames
/// the server wrote in answer (responses, notifications, requests to the client) come back as
/// bytes, one JSON-RPC message each, without a newline.
///
/// Handler calls run on a current-thread Tokio runtime of the dispatcher's own, with timers
/// but no I/O reactor (a handler that does network or pipe I/O through Tokio fails). A call that
/// finishes without waiting is answered by [`Dispatcher::dispatch`]; one still waiting then
/// (for a timer, or for an answer from the client) goes on in the background, and
/// [`Dispatcher::finish`] — the end of the input, as at the end of standard input — waits for
/// it and returns what it wrote.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::testing::Dispatcher;
///
/// /// Add two integers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a.wrapping_add(b) }
///
/// # fn main() {
/// let server = mcp_runtime::server!().auto_register(false).tools(mcp_runtime::tools![add]);
/// let mut connection = Dispatcher::new(&server.build().unwrap());
/// let frames = connection.dispatch(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
/// assert_eq!(frames.len(), 1);
/// let frames = connection.dispatch(b"{not json");
/// assert!(String::from_utf8_lossy(&frames[0]).starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"#));
/// let frames = connection.dispatch(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#);
/// assert!(String::from_utf8_lossy(&frames[0]).contains(r#""text":"5""#));
/// assert!(connection.finish().is_empty());
/// # }
/// ```
pub struct Dispatcher {
    // Dropped before the runtime: a connection's session may hold tasks of the runtime.
    connection: Option<Connection>,
    frames: OutboundQueue,
    runtime: tokio::runtime::Runtime,
}

impl Dispatcher {
    /// A new connection to `server`, as a client that has just started it sees it.
    ///
    /// # Panics
    ///
    /// When a Tokio runtime cannot be built. [`Dispatcher::dispatch`] and
    /// [`Dispatcher::finish`] block on that runtime: they panic when called from inside an
    /// asynchronous context (a `#[tokio::test]`, a handler); use a plain `#[test]`.
    pub fn new(server: &Server) -> Dispatcher {
        // Timers only: no handler here does I/O, and a reactor costs file descriptors and
        // system calls on every connection, which a fuzzer makes by the million.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread Tokio runtime");
        let (out, frames) = Outbound::new();
        let connection = {
            let _entered = runtime.enter();
            Connection::new(server.clone(), out)
        };
        Dispatcher {
            connection: Some(connection),
            frames,
            runtime,
        }
    }

    /// Routes one message (a line of standard input without its newline; any bytes at all)
    /// and returns the frames the server wrote since the last call, in order.
    pub fn dispatch(&mut self, message: &[u8]) -> Vec<Frame> {
        if let Some(connection) = &self.connection {
            self.runtime.block_on(async {
                connection.handle(Line::Message(message));
                for _ in 0..SETTLE_ROUNDS {
                    tokio::task::yield_now().await;
                }
            });
        }
        self.written()
    }

    /// Ends the input: waits for every call in flight to finish, as the stdio transport does
    /// at the end of standard input, and returns the frames written since the last call.
    pub fn finish(mut self) -> Vec<Frame> {
        if let Some(connection) = self.connection.take() {
            self.runtime.block_on(connection.close());
        }
        self.written()
    }

    fn written(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(frame) = self.frames.try_recv() {
            // An empty frame only tells a writer that the output is closed.
            if !frame.is_empty() {
                frames.push(frame);
            }
        }
        frames
    }
}
