//! Requests from the server to the client (sampling, elicitation, roots, ping): the table that
//! matches the client's responses to the handlers awaiting them, and why a request got no
//! answer ([`ClientError`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::protocol::{RequestId, RpcError};

/// Why a request to the client did not produce an answer.
///
/// Converts into [`ToolError`](crate::ToolError), so `?` in a tool turns it into a tool error
/// the model can read.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The client did not declare the capability (e.g. `sampling`), so it was not asked.
    NotSupported {
        /// The capability, e.g. `"sampling"` or `"elicitation.url"`.
        capability: &'static str,
    },
    /// The client did not answer in time; the request was cancelled.
    Timeout {
        /// The method asked.
        method: &'static str,
        /// How long the server waited.
        after: Duration,
    },
    /// The client answered with a JSON-RPC error.
    Rejected {
        /// The method asked.
        method: &'static str,
        /// The client's error.
        error: RpcError,
    },
    /// The client's answer did not have the expected shape.
    InvalidResponse {
        /// The method asked.
        method: &'static str,
        /// What was wrong.
        problem: String,
    },
    /// What the handler asked for cannot be expressed (e.g. a form of nested objects).
    InvalidRequest(String),
    /// The connection to the client closed before it answered.
    Disconnected,
    /// A stateless (2026-07-28) request needs the client's answer first: the call ends here
    /// with an `InputRequiredResult`, and runs again when the client retries with the answer.
    /// Let it propagate (`?`); whatever the handler returns instead is not sent.
    InputRequired {
        /// The method asked.
        method: &'static str,
    },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::NotSupported { capability } => write!(
                f,
                "the client does not support `{capability}`, so it cannot be asked"
            ),
            ClientError::Timeout { method, after } => write!(
                f,
                "the client did not answer `{method}` within {} s",
                after.as_secs_f64()
            ),
            ClientError::Rejected { method, error } => {
                write!(f, "the client refused `{method}`: {}", error.message)
            }
            ClientError::InvalidResponse { method, problem } => {
                write!(f, "the client's answer to `{method}` is invalid: {problem}")
            }
            ClientError::InvalidRequest(problem) => f.write_str(problem),
            ClientError::Disconnected => f.write_str("the client disconnected before answering"),
            ClientError::InputRequired { method } => write!(
                f,
                "the client must answer `{method}` first; the request resumes when it does"
            ),
        }
    }
}

impl std::error::Error for ClientError {}

/// The answer a handler awaits: the `result`, or the client's error.
pub(crate) type ClientAnswer = Result<Value, RpcError>;

/// The server's requests to one client that await an answer.
///
/// Ids are the server's own: JSON-RPC ids belong to their sender, so they never mix with the
/// ids of the client's requests; a response is told apart from a request by having no method.
pub(crate) struct ClientRequests {
    /// Where this session's ids start, drawn when the first is handed out (most sessions,
    /// and every stateless request, never ask the client anything).
    start: OnceLock<i64>,
    /// Ids handed out so far.
    issued: AtomicI64,
    pending: Mutex<HashMap<i64, oneshot::Sender<ClientAnswer>>>,
}

impl ClientRequests {
    pub(crate) fn new() -> Self {
        ClientRequests {
            start: OnceLock::new(),
            issued: AtomicI64::new(0),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// The next id. Ids start at a random point so that replicas sharing a session never ask
    /// two questions under one id: 2^32 ids from each of 2^20 starting points, all below
    /// 2^53, which JavaScript clients read back exactly.
    fn next_id(&self) -> i64 {
        let start = *self.start.get_or_init(|| {
            let mut seed = [0u8; 4];
            if getrandom::fill(&mut seed).is_ok() {
                i64::from(u32::from_le_bytes(seed) >> 12) << 32
            } else {
                0
            }
        });
        start + self.issued.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Reserves an id and the slot its answer will arrive in.
    pub(crate) fn register(&self) -> (i64, oneshot::Receiver<ClientAnswer>) {
        let id = self.next_id();
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
    pub(crate) fn deliver(
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
