//! What carries the client's messages: a child process's standard input and output, HTTP
//! (Streamable HTTP in either era, or the legacy HTTP+SSE transport), or a server in the
//! same process.

use serde_json::Value;

use super::CallError;
use super::http::Http;
use super::memory::Memory;
use super::stdio::Stdio;

/// What a message is, for the transport: HTTP sends each kind differently.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Request { id: i64, method: String },
    Notification,
    Response,
}

/// One message on its way to the server, with the headers a stateless request carries.
#[derive(Clone, Debug)]
pub(crate) struct Outgoing {
    pub message: Value,
    pub kind: Kind,
    pub headers: Vec<(String, String)>,
}

impl Outgoing {
    pub(crate) fn request(
        message: Value,
        id: i64,
        method: &str,
        headers: Vec<(String, String)>,
    ) -> Self {
        Outgoing {
            message,
            kind: Kind::Request {
                id,
                method: method.to_owned(),
            },
            headers,
        }
    }

    pub(crate) fn notification(message: Value) -> Self {
        Outgoing {
            message,
            kind: Kind::Notification,
            headers: Vec::new(),
        }
    }

    pub(crate) fn response(message: Value) -> Self {
        Outgoing {
            message,
            kind: Kind::Response,
            headers: Vec::new(),
        }
    }
}

pub(crate) enum Wire {
    Stdio(Box<Stdio>),
    Http(Box<Http>),
    Memory(Memory),
}

impl Wire {
    /// Whether a request on it may meet a sign-in: over HTTP with OAuth or a token only.
    pub(crate) fn signs_in(&self) -> bool {
        matches!(self, Wire::Http(http) if http.authorizes())
    }

    pub(crate) async fn send(&self, outgoing: Outgoing) -> Result<(), CallError> {
        match self {
            Wire::Stdio(stdio) => stdio.send(&outgoing.message).await,
            Wire::Http(http) => http.send(outgoing).await,
            Wire::Memory(memory) => memory.send(&outgoing.message).await,
        }
    }

    /// The caller gave up on request `id`: over HTTP, its exchange is closed.
    pub(crate) fn abandon(&self, id: i64) {
        if let Wire::Http(http) = self {
            http.abandon(id);
        }
    }

    pub(crate) async fn close(&self) {
        match self {
            Wire::Stdio(stdio) => stdio.close().await,
            Wire::Http(http) => http.close().await,
            Wire::Memory(memory) => memory.close().await,
        }
    }
}
