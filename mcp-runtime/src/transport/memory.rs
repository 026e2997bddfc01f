//! An in-process client, for tests and examples: it drives a [`Server`] through the same
//! dispatch as stdio, without a process or a pipe.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::connection::{Inbound, serve_connection};
use crate::content::CallToolResult;
use crate::protocol::{ProtocolVersion, RequestId, RpcError};
use crate::server::Server;
use crate::session::Outbound;

type Pending = Arc<Mutex<HashMap<RequestId, oneshot::Sender<Value>>>>;

/// A client connected to a server in the same process.
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
///
/// /// Add two integers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[mcp_runtime::main] async fn main() {
/// let server = mcp_runtime::server!().build().unwrap();
/// let client = server.connect_memory();
/// client.initialize().await.unwrap();
/// let result = client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
/// assert_eq!(result.content, vec![Content::text("5")]);
/// # }
/// ```
pub struct MemoryClient {
    tx: mpsc::Sender<Inbound>,
    pending: Pending,
    messages: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    next_id: AtomicI64,
}

impl Server {
    /// Connects an in-process client. Must be called inside a Tokio runtime.
    pub fn connect_memory(&self) -> MemoryClient {
        let (tx, rx) = mpsc::channel(64);
        let (out, mut frames) = Outbound::new();
        tokio::spawn(serve_connection(self.clone(), rx, out));
        let pending: Pending = Arc::default();
        let (messages_tx, messages) = mpsc::unbounded_channel();
        let demux_pending = Arc::clone(&pending);
        let server = self.clone();
        tokio::spawn(async move {
            while let Some(frame) = frames.recv().await {
                if frame.is_empty() {
                    break;
                }
                server.trace_out(&frame);
                let Ok(value) = serde_json::from_slice::<Value>(&frame) else {
                    continue;
                };
                let waiter = value
                    .get("id")
                    .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
                    .filter(|_| value.get("method").is_none())
                    .and_then(|id| {
                        demux_pending
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(&id)
                    });
                match waiter {
                    Some(waiter) => {
                        let _ = waiter.send(value);
                    }
                    None => {
                        let _ = messages_tx.send(value);
                    }
                }
            }
        });
        MemoryClient {
            tx,
            pending,
            messages: tokio::sync::Mutex::new(messages),
            next_id: AtomicI64::new(1),
        }
    }
}

impl MemoryClient {
    /// Performs the handshake at the newest revision and sends `notifications/initialized`;
    /// returns the `initialize` result.
    pub async fn initialize(&self) -> Result<Value, RpcError> {
        self.initialize_with(ProtocolVersion::LATEST_HANDSHAKE.as_str(), json!({}))
            .await
    }

    /// Performs the handshake asking for `version`, declaring `capabilities`.
    pub async fn initialize_with(
        &self,
        version: &str,
        capabilities: Value,
    ) -> Result<Value, RpcError> {
        let result = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "mcp-runtime-memory-client", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        self.notify("notifications/initialized", json!({})).await;
        Ok(result)
    }

    /// Sends a request and waits for its response: the `result`, or the JSON-RPC error.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (waiter, response) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(RequestId::Number(id), waiter);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&message.to_string()).await;
        let mut response = response
            .await
            .map_err(|_| RpcError::internal("the server closed the connection"))?;
        if let Some(error) = response.get_mut("error") {
            return Err(serde_json::from_value(error.take())
                .unwrap_or_else(|e| RpcError::internal(format!("malformed error: {e}"))));
        }
        Ok(response
            .get_mut("result")
            .map(Value::take)
            .unwrap_or(Value::Null))
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_raw(&message.to_string()).await;
    }

    /// Sends one raw message, exactly as given.
    pub async fn send_raw(&self, message: &str) {
        let _ = self
            .tx
            .send(Inbound::Message(message.as_bytes().to_vec()))
            .await;
    }

    /// The next message from the server that answers no request of this client: a
    /// notification, or a response to a raw message. `None` once the server has closed.
    pub async fn next_message(&self) -> Option<Value> {
        self.messages.lock().await.recv().await
    }

    /// Calls a tool.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, RpcError> {
        let result = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        serde_json::from_value(result)
            .map_err(|e| RpcError::internal(format!("malformed result: {e}")))
    }

    /// Lists every tool, following cursors across pages.
    pub async fn list_tools(&self) -> Result<Vec<Value>, RpcError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut page = self.request("tools/list", params).await?;
            if let Some(Value::Array(items)) = page.get_mut("tools").map(Value::take) {
                tools.extend(items);
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(tools),
            }
        }
    }
}
