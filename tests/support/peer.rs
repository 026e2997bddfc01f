//! A client that speaks one protocol revision over one transport, so that a test can run the
//! same scenario under every revision, over pipes and over HTTP.
//!
//! In the handshake era it opens with `initialize` (and keeps the HTTP session it gets); in
//! the stateless era (2026-07-28) every request carries `_meta` and, over HTTP, the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers.

use std::path::Path;

use serde_json::{Value, json};

use crate::StdioServer;
use crate::http::{HttpServer, Request, Response};

/// The stateless revision.
pub const MODERN: &str = "2026-07-28";

/// How the client reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// Every (transport, revision) pair a server speaks: stdio at every revision, Streamable
/// HTTP from 2025-03-26 (2024-11-05 had the older HTTP+SSE transport).
pub fn every_era() -> Vec<(Transport, &'static str)> {
    let mut pairs = Vec::new();
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        MODERN,
    ] {
        pairs.push((Transport::Stdio, version));
        if version != "2024-11-05" {
            pairs.push((Transport::Http, version));
        }
    }
    pairs
}

/// One answer: the response message, the notifications that came before it on its stream,
/// and (over HTTP) the status.
#[derive(Debug)]
pub struct Reply {
    pub message: Value,
    pub notifications: Vec<Value>,
    pub status: Option<u16>,
}

impl Reply {
    /// The result; fails the test on an error.
    pub fn result(&self) -> &Value {
        assert!(
            self.message.get("error").is_none(),
            "an error instead of a result: {}",
            self.message
        );
        &self.message["result"]
    }

    /// The error code; fails the test on a result.
    pub fn error_code(&self) -> i64 {
        self.message["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("a result instead of an error: {}", self.message))
    }
}

enum Link {
    Stdio(StdioServer),
    Http {
        server: HttpServer,
        session: Option<String>,
    },
}

/// A client of one server process, at one revision over one transport.
pub struct Peer {
    pub transport: Transport,
    pub version: &'static str,
    capabilities: Value,
    link: Link,
    next_id: i64,
}

impl Peer {
    /// Starts `program` and opens the conversation: `initialize` in the handshake era,
    /// nothing in the stateless one. `capabilities` are the client's, sent at `initialize`
    /// or in every request's `_meta`.
    pub fn open(
        program: &Path,
        transport: Transport,
        version: &'static str,
        capabilities: Value,
    ) -> Peer {
        Peer::open_with_env(program, transport, version, capabilities, &[])
    }

    /// Like [`Peer::open`], with `env` in the server's environment.
    pub fn open_with_env(
        program: &Path,
        transport: Transport,
        version: &'static str,
        capabilities: Value,
        env: &[(&str, &str)],
    ) -> Peer {
        let link = match transport {
            Transport::Stdio => Link::Stdio(StdioServer::spawn_with_env(program, env)),
            Transport::Http => Link::Http {
                server: HttpServer::spawn(program, env),
                session: None,
            },
        };
        let mut peer = Peer {
            transport,
            version,
            capabilities,
            link,
            next_id: 1,
        };
        peer.handshake();
        peer
    }

    /// In the handshake era, `initialize` (a new session over HTTP); nothing otherwise.
    pub fn handshake(&mut self) {
        if self.is_modern() {
            return;
        }
        if let Link::Http { session, .. } = &mut self.link {
            *session = None;
        }
        let params = json!({
            "protocolVersion": self.version,
            "capabilities": self.capabilities,
            "clientInfo": {"name": "eras-e2e", "version": "1.0.0"},
        });
        let reply = self.call("initialize", params);
        assert_eq!(reply.result()["protocolVersion"], self.version, "{reply:?}");
        self.notify("notifications/initialized", json!({}));
    }

    /// The HTTP session id, in the handshake era.
    pub fn session_id(&self) -> Option<&str> {
        match &self.link {
            Link::Http { session, .. } => session.as_deref(),
            Link::Stdio(_) => None,
        }
    }

    pub fn is_modern(&self) -> bool {
        self.version == MODERN
    }

    /// What the test runs under, for assertion messages.
    pub fn label(&self) -> String {
        format!("{:?} at {}", self.transport, self.version)
    }

    /// The request's parameters with the stateless era's `_meta` added.
    fn with_meta(&self, mut params: Value) -> Value {
        if self.is_modern() {
            let meta = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "eras-e2e", "version": "1.0.0"},
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
            });
            match params.get_mut("_meta").and_then(Value::as_object_mut) {
                Some(given) => {
                    for (k, v) in meta.as_object().into_iter().flatten() {
                        given.entry(k.clone()).or_insert(v.clone());
                    }
                }
                None => params["_meta"] = meta,
            }
        }
        params
    }

    /// Sends a request and waits for its response.
    pub fn call(&mut self, method: &str, params: Value) -> Reply {
        self.call_with_headers(method, params, &[])
    }

    /// Like [`Peer::call`], with extra HTTP headers (ignored over stdio).
    pub fn call_with_headers(
        &mut self,
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
    ) -> Reply {
        let id = self.next_id;
        self.next_id += 1;
        let params = self.with_meta(params);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        match &mut self.link {
            Link::Stdio(server) => {
                server.send(&message);
                let response = server.response(id);
                Reply {
                    message: response,
                    notifications: server.take_backlog(),
                    status: None,
                }
            }
            Link::Http { .. } => {
                let mut request = self.http_post(&message);
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                let response = request.send();
                self.read_http(response, id)
            }
        }
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        match &mut self.link {
            Link::Stdio(server) => server.send(&message),
            Link::Http { .. } => {
                let response = self.http_post(&message).send();
                assert_eq!(response.status, 202, "{response:?}");
            }
        }
    }

    /// The POST of one message with the headers this revision's clients send.
    pub fn http_post(&self, message: &Value) -> Request {
        let Link::Http { server, session } = &self.link else {
            panic!("not an HTTP peer");
        };
        let mut request = server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream");
        if self.version != "2025-03-26" {
            request = request.header("MCP-Protocol-Version", self.version);
        }
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session);
        }
        if self.is_modern()
            && let Some(method) = message["method"].as_str()
        {
            request = request.header("Mcp-Method", method);
            let params = &message["params"];
            let name = match method {
                "tools/call" | "prompts/get" => params["name"].as_str(),
                "resources/read" => params["uri"].as_str(),
                "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str(),
                _ => None,
            };
            if let Some(name) = name {
                request = request.header("Mcp-Name", name);
            }
        }
        request.json(message)
    }

    fn read_http(&mut self, response: Response, id: i64) -> Reply {
        let status = response.status;
        if let Some(session) = response.header("mcp-session-id") {
            let session = session.to_owned();
            if let Link::Http { session: slot, .. } = &mut self.link {
                *slot = Some(session);
            }
        }
        if response.media_type() == Some("text/event-stream") {
            let mut events = response.events();
            let mut notifications = Vec::new();
            while let Some(event) = events.next_event() {
                if event.data.as_deref().is_none_or(str::is_empty) {
                    continue;
                }
                let message = event.json();
                if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                    return Reply {
                        message,
                        notifications,
                        status: Some(status),
                    };
                }
                notifications.push(message);
            }
            panic!("the stream ended without the response to {id}: {notifications:?}");
        }
        Reply {
            message: response.json(),
            notifications: Vec::new(),
            status: Some(status),
        }
    }

    /// The server over stdio, for tests that need the raw pipe.
    pub fn stdio(&mut self) -> &mut StdioServer {
        match &mut self.link {
            Link::Stdio(server) => server,
            Link::Http { .. } => panic!("not a stdio peer"),
        }
    }

    /// The server over HTTP, for tests that need raw requests.
    pub fn http(&self) -> &HttpServer {
        match &self.link {
            Link::Http { server, .. } => server,
            Link::Stdio(_) => panic!("not an HTTP peer"),
        }
    }

    /// The next request id this peer will use (for raw messages sent beside it).
    pub fn take_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The parameters with this revision's `_meta`, for raw messages.
    pub fn params(&self, params: Value) -> Value {
        self.with_meta(params)
    }
}
