//! The channel one request answers on: where its frames go, and what the transport knows of
//! it beyond its bytes (the caller, its response stream, its stateless round trip, the task
//! it may become).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{ClientError, Outbound, RoundTrip};
use crate::auth::AuthInfo;
use crate::protocol::Frame;

/// Where the frames of one request go (its response stream), and what the transport knows
/// about the request beyond its bytes.
#[derive(Clone)]
pub(crate) struct RequestChannel {
    pub out: Outbound,
    /// The caller's identity, when the transport authenticated it.
    pub auth: Option<Arc<AuthInfo>>,
    /// Control of the response stream, when the transport has one (Streamable HTTP).
    pub stream: Option<Arc<dyn StreamControl>>,
    /// A stateless request's answers from the client, and the input its handler still needs.
    pub round_trip: Option<Arc<RoundTrip>>,
    /// A tool call that may become a task, and the task once it has.
    pub task: Option<Arc<TaskSlot>>,
    /// Fires when the transport closes (stdio input ended, HTTP shutdown): long-lived
    /// requests such as `subscriptions/listen` end then.
    pub closing: CancellationToken,
    /// The transport already knows the request is of the stateless era (its HTTP
    /// `MCP-Protocol-Version` says so): without `_meta` it is refused as such.
    pub stateless_only: bool,
    /// The HTTP request that carried the message, when one did.
    #[cfg(feature = "http")]
    pub http: Option<Arc<HttpRequest>>,
}

/// The HTTP request that carried a message, as a handler sees it
/// ([`Context::http_request`](crate::Context::http_request)): read-only, and without its
/// `Authorization` and `Proxy-Authorization` headers — the verified identity is [`Context::auth`](crate::Context::auth),
/// and a server never passes a client's token on (the MCP authorization rules forbid it).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Which region the caller's proxy says it is in.
/// #[tool]
/// fn region(ctx: Context) -> String {
///     ctx.http_request()
///         .and_then(|request| request.headers().get("x-region"))
///         .and_then(|value| value.to_str().ok())
///         .unwrap_or("unknown")
///         .to_owned()
/// }
/// # fn main() {}
/// ```
#[cfg(feature = "http")]
pub struct HttpRequest {
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
    peer: Option<std::net::SocketAddr>,
}

#[cfg(feature = "http")]
impl HttpRequest {
    pub(crate) fn new(
        method: axum::http::Method,
        uri: axum::http::Uri,
        mut headers: axum::http::HeaderMap,
        peer: Option<std::net::SocketAddr>,
    ) -> Self {
        use axum::http::header::{AUTHORIZATION, PROXY_AUTHORIZATION};
        // Looked for among the few names first: a removal hashes its name and probes the map
        // even when the header is not there, as it nearly never is.
        if headers
            .keys()
            .any(|name| name == AUTHORIZATION || name == PROXY_AUTHORIZATION)
        {
            headers.remove(AUTHORIZATION);
            headers.remove(PROXY_AUTHORIZATION);
        }
        HttpRequest {
            method,
            uri,
            headers,
            peer,
        }
    }

    /// The request's method (`POST`).
    pub fn method(&self) -> &axum::http::Method {
        &self.method
    }

    /// The request's URI as the server received it (path and query).
    pub fn uri(&self) -> &axum::http::Uri {
        &self.uri
    }

    /// The request's path.
    pub fn path(&self) -> &str {
        self.uri.path()
    }

    /// The request's headers, but `Authorization` and `Proxy-Authorization`.
    pub fn headers(&self) -> &axum::http::HeaderMap {
        &self.headers
    }

    /// The address of the peer that sent the request (a proxy's, behind one), when the
    /// server knows it (`serve_http` does; a router mounted without connect info does not).
    pub fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        self.peer
    }
}

impl RequestChannel {
    pub(crate) fn new(out: Outbound) -> Self {
        RequestChannel {
            out,
            auth: None,
            stream: None,
            round_trip: None,
            task: None,
            closing: CancellationToken::new(),
            stateless_only: false,
            #[cfg(feature = "http")]
            http: None,
        }
    }

    pub(crate) fn send(&self, frame: Frame) {
        self.out.send(frame);
    }

    /// Queues a notification of this request (progress, a log message), which a peer that
    /// does not read may lose.
    pub(crate) fn notify(&self, frame: Frame) {
        self.out.notify(frame);
    }
}

/// A transport's response stream, as a handler may steer it.
pub(crate) trait StreamControl: Send + Sync {
    /// Ends the response stream now, asking the client to reconnect after `retry`; the
    /// handler goes on and its later messages wait for the client to resume.
    fn close(&self, retry: Option<std::time::Duration>);
}

/// A call that may become a task (the tasks extension); it holds the task once it has.
#[derive(Default)]
pub(crate) struct TaskSlot {
    task: OnceLock<Arc<dyn CallTask>>,
}

impl TaskSlot {
    /// The task this call became, if it did.
    pub(crate) fn task(&self) -> Option<&Arc<dyn CallTask>> {
        self.task.get()
    }

    /// Records the task this call became (once).
    pub(crate) fn become_task(&self, task: Arc<dyn CallTask>) {
        let _ = self.task.set(task);
    }
}

/// The task a call became, as its handler sees it.
pub(crate) trait CallTask: Send + Sync {
    /// The task's id.
    fn id(&self) -> &str;

    /// Asks the client through the task (`input_required`) and waits for its
    /// `tasks/update`.
    fn ask(
        &self,
        key: String,
        method: &'static str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, ClientError>> + Send + '_>>;
}

/// Header names only: values (cookies, keys of other services) stay out of logs.
#[cfg(feature = "http")]
impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.keys().map(|k| k.as_str()).collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("path", &self.uri.path())
            .field("headers", &names)
            .field("peer", &self.peer)
            .finish()
    }
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn a_request_drops_credentials_and_its_debug_shows_header_names_only() {
        let mut headers = axum::http::HeaderMap::new();
        headers.insert("authorization", "Bearer secret-token".parse().unwrap());
        headers.insert("proxy-authorization", "Basic c2VjcmV0".parse().unwrap());
        headers.insert("x-api-key", "key-value-123".parse().unwrap());
        let request = HttpRequest::new(
            axum::http::Method::POST,
            "/mcp?x=1".parse().unwrap(),
            headers,
            None,
        );
        assert!(request.headers().get("authorization").is_none());
        assert!(request.headers().get("proxy-authorization").is_none());
        assert_eq!(request.path(), "/mcp");
        let shown = format!("{request:?}");
        assert!(shown.contains("x-api-key"), "{shown}");
        assert!(
            !shown.contains("key-value-123") && !shown.contains("secret"),
            "{shown}"
        );
        // Either credential alone is dropped too.
        for name in ["authorization", "proxy-authorization"] {
            let mut headers = axum::http::HeaderMap::new();
            headers.insert("x-api-key", "key-value-123".parse().unwrap());
            headers.insert(name, "Basic c2VjcmV0".parse().unwrap());
            let request = HttpRequest::new(
                axum::http::Method::POST,
                "/mcp".parse().unwrap(),
                headers,
                None,
            );
            assert!(request.headers().get(name).is_none(), "{name}");
            assert!(request.headers().get("x-api-key").is_some());
        }
    }
}
