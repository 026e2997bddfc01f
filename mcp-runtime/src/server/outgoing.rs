//! Requests from the server to the client (sampling, elicitation, roots, ping): the table that
//! matches the client's responses to the handlers awaiting them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::protocol::{RequestId, RpcError};

/// The answer a handler awaits: the `result`, or the client's error.
pub(crate) type ClientAnswer = Result<Value, RpcError>;

/// The server's requests to one client that await an answer.
///
/// Ids are the server's own: JSON-RPC ids belong to their sender, so they never mix with the
/// ids of the client's requests; a response is told apart from a request by having no method.
pub(crate) struct OutgoingRequests {
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, oneshot::Sender<ClientAnswer>>>,
}

impl OutgoingRequests {
    pub(crate) fn new() -> Self {
        // Ids start at a random point so that replicas sharing a session never ask two
        // questions under one id: 2^32 ids from each of 2^20 starting points, all below
        // 2^53, which JavaScript clients read back exactly.
        let mut seed = [0u8; 4];
        let start = if getrandom::fill(&mut seed).is_ok() {
            i64::from(u32::from_le_bytes(seed) >> 12) << 32
        } else {
            0
        };
        OutgoingRequests {
            next_id: AtomicI64::new(start + 1),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Reserves an id and the slot its answer will arrive in.
    pub(crate) fn register(&self) -> (i64, oneshot::Receiver<ClientAnswer>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, tx);
        (id, rx)
    }

    /// Forgets a request (timed out or abandoned); true when it was still pending.
    pub(crate) fn forget(&self, id: i64) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id)
            .is_some()
    }

    /// Hands a response to the handler awaiting it; a response to nothing (late, duplicate,
    /// or never asked) is handed back.
    pub(crate) fn complete(
        &self,
        id: Option<&RequestId>,
        answer: ClientAnswer,
    ) -> Option<ClientAnswer> {
        let waiter = match id {
            Some(RequestId::Number(n)) => self
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(n),
            _ => None,
        };
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(answer);
                None
            }
            None => Some(answer),
        }
    }

    /// Fails every pending request: the client is gone.
    pub(crate) fn disconnect(&self) {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}
