//! One connection of newline-delimited messages (stdio, or the in-memory client): routes each
//! message in arrival order, runs handler calls concurrently, and drains them at the end.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use crate::protocol::{RpcError, error_frame};
use crate::server::session::{Outbound, RequestChannel, Session};
use crate::server::{Routed, Server};

/// One unit read from a connection.
pub(crate) enum Inbound {
    /// One message, without its line terminator.
    Message(Vec<u8>),
    /// A message longer than the limit, which was skipped.
    TooLarge { limit: usize },
}

/// Serves one connection until its input ends; then waits for the calls in flight to finish.
pub(crate) async fn serve_connection(
    server: Server,
    mut inbound: mpsc::Receiver<Inbound>,
    out: Outbound,
) {
    let session = Arc::new(Session::new(out.clone()));
    server.register_session(&session);
    let tracker = TaskTracker::new();
    let channel = RequestChannel::new(out.clone());
    let closing = channel.closing.clone();
    while let Some(item) = inbound.recv().await {
        let message = match item {
            Inbound::Message(message) => message,
            Inbound::TooLarge { limit } => {
                out.send(error_frame(
                    None,
                    &RpcError::invalid_request(format!(
                        "message larger than the limit of {limit} bytes"
                    )),
                ));
                continue;
            }
        };
        match server.route(&session, &message, &channel) {
            Routed::Reply(frame) => {
                if let Some(frame) = frame {
                    out.send(frame);
                }
            }
            Routed::Deferred(call) => {
                let out = out.clone();
                tracker.spawn(async move {
                    if let Some(frame) = call.await {
                        out.send(frame);
                    }
                });
            }
        }
    }
    // Calls in flight finish; subscriptions, which never would, end now.
    closing.cancel();
    tracker.close();
    tracker.wait().await;
    session.cancel_all();
    out.close();
}
