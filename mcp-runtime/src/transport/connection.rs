//! One connection of newline-delimited messages (stdio, or the in-memory client): routes each
//! message in arrival order, answers calls that finish without waiting at once, runs the
//! others concurrently, and drains them at the end.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};

use super::tracker::Tasks;
use tokio::sync::mpsc;

use crate::protocol::{Frame, RpcError, error_frame};
use crate::server::{Routed, Server};
use crate::session::{Outbound, RequestChannel, Session};

/// One unit read from a connection, owned (handed over a channel).
pub(crate) enum Inbound {
    /// One message, without its line terminator.
    Message(Vec<u8>),
    /// A message longer than the limit, which was skipped.
    TooLarge { limit: usize },
}

impl Inbound {
    pub(crate) fn as_line(&self) -> Line<'_> {
        match self {
            Inbound::Message(message) => Line::Message(message),
            Inbound::TooLarge { limit } => Line::TooLarge { limit: *limit },
        }
    }
}

/// One unit read from a connection, borrowed from the reader's buffer when it can be.
pub(crate) enum Line<'a> {
    /// One message, without its line terminator.
    Message(&'a [u8]),
    /// A message longer than the limit, which was skipped.
    TooLarge { limit: usize },
}

/// The server's side of one connection: its session and the calls in flight on it.
pub(crate) struct Connection {
    server: Server,
    session: Arc<Session>,
    channel: RequestChannel,
    tracker: Tasks,
    out: Outbound,
}

impl Connection {
    pub(crate) fn new(server: Server, out: Outbound) -> Connection {
        let session = Arc::new(Session::new(out.clone()));
        server.register_session(&session);
        Connection {
            server,
            session,
            channel: RequestChannel::new(out.clone()),
            tracker: Tasks::new(),
            out,
        }
    }

    /// Routes one unit read from the connection, and queues what it answers at once.
    pub(crate) fn handle(&self, line: Line<'_>) {
        if let Some(frame) = self.answer(line) {
            self.out.send(frame);
        }
    }

    /// Routes one unit read from the connection.
    ///
    /// A handler call is polled once here: one that finishes without waiting — every
    /// synchronous tool, and most asynchronous ones — is answered before the next message
    /// is read, with no task spawned and no other thread woken. One that waits goes on as a
    /// task of its own.
    ///
    /// A reply ready at once is returned rather than queued when the queue is empty, for the
    /// caller to write before anything queued from then on (the order frames were made in);
    /// when frames wait in the queue, the reply is queued behind them.
    pub(crate) fn answer(&self, line: Line<'_>) -> Option<Frame> {
        let message = match line {
            Line::Message(message) => message,
            Line::TooLarge { limit } => {
                return self.now_or_queued(error_frame(
                    None,
                    &RpcError::invalid_request(format!(
                        "message larger than the limit of {limit} bytes"
                    )),
                ));
            }
        };
        if self.tracker.len() >= self.server.max_in_flight()
            && let Some(id) = request_id(message)
        {
            // Notifications and responses always pass: a cancellation or an answer the
            // calls in flight wait for is what frees their slots.
            return self.now_or_queued(error_frame(
                Some(&id),
                &RpcError::new(
                    crate::protocol::code::SERVER_BUSY,
                    format!(
                        "too many requests in flight (the limit is {}): wait for some to finish",
                        self.server.max_in_flight()
                    ),
                ),
            ));
        }
        match self.server.route(&self.session, message, &self.channel) {
            Routed::Reply(frame) => frame.and_then(|frame| self.now_or_queued(frame)),
            Routed::Deferred(mut call) => {
                // Polled with a waker that does nothing: a call still pending is polled again
                // by its task, and a future must wake the waker it was polled with last.
                let mut cx = TaskContext::from_waker(Waker::noop());
                match Pin::new(&mut call).poll(&mut cx) {
                    Poll::Ready(frame) => frame.and_then(|frame| self.now_or_queued(frame)),
                    Poll::Pending => {
                        let out = self.out.clone();
                        self.tracker.spawn(async move {
                            if let Some(frame) = call.await {
                                out.send(frame);
                            }
                        });
                        None
                    }
                }
            }
        }
    }

    /// The frame back when nothing waits in the queue; queued behind what does otherwise.
    fn now_or_queued(&self, frame: Frame) -> Option<Frame> {
        if self.out.is_empty() {
            Some(frame)
        } else {
            self.out.send(frame);
            None
        }
    }

    /// The input ended: subscriptions end, the calls in flight may finish within the
    /// server's shutdown grace and are cancelled after it, then the output closes.
    pub(crate) async fn close(self) {
        self.channel.closing.cancel();
        self.tracker.close();
        let grace = self.server.shutdown_grace();
        if tokio::time::timeout(grace, self.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                calls = self.tracker.len(),
                "the client left; calls still running after the shutdown grace are cancelled"
            );
            self.session.cancel_all();
            self.tracker.wait().await;
        }
        self.session.cancel_all();
        self.out.close();
    }
}

/// The id of a message when it is a request (it has a method and an id).
fn request_id(message: &[u8]) -> Option<crate::protocol::RequestId> {
    #[derive(serde::Deserialize)]
    struct Peek<'a> {
        #[serde(borrow, default)]
        method: Option<&'a serde_json::value::RawValue>,
        #[serde(default)]
        id: Option<crate::protocol::RequestId>,
    }
    let peek: Peek<'_> = serde_json::from_slice(message).ok()?;
    peek.method.and(peek.id)
}

/// Serves one connection until its input ends; then waits for the calls in flight to finish.
pub(crate) async fn serve_connection(
    server: Server,
    mut inbound: mpsc::Receiver<Inbound>,
    out: Outbound,
) {
    let connection = Connection::new(server, out);
    while let Some(item) = inbound.recv().await {
        connection.handle(item.as_line());
    }
    connection.close().await;
}
