//! The client's side of one connection, whatever carries it: requests waiting for their
//! answers, the server's requests answered through the user's handlers, notifications handed
//! to whoever listens, and the metadata every stateless request carries.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use super::auth::{SIGN_IN_CLOCK, SignInClock};
use super::types::{Notification, Progress, ServerIdentity};
use super::wire::{Outgoing, Wire};
use super::{CallError, Forward, Handlers, MAX_SERVER_REQUESTS, RequestOptions};
use crate::protocol::{Implementation, RpcError};
use crate::registry::headers::{HeaderParam, header_params};

/// The stateless revision this client speaks.
pub(crate) const STATELESS_VERSION: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// How many times one stateless request is sent again with answers before the client gives
/// up on a server that keeps asking.
const MAX_ROUNDS: usize = 16;

/// How many refusals of the server's requests (past [`MAX_SERVER_REQUESTS`]) may be on
/// their way at once; past that, a request is dropped unanswered (a server sending that
/// many is not waiting for answers).
const MAX_REFUSALS: usize = 256;

type Answer = Result<Value, RpcError>;

struct Pending {
    answer: oneshot::Sender<Answer>,
    progress: Option<super::ProgressSender>,
    forward: Option<Forward>,
}

pub(crate) struct Engine {
    wire: OnceLock<Wire>,
    identity: OnceLock<ServerIdentity>,
    pending: Mutex<HashMap<i64, Pending>>,
    next_id: AtomicI64,
    notifications: broadcast::Sender<Notification>,
    pub(crate) handlers: Handlers,
    pub(crate) info: Implementation,
    /// The capabilities the handlers declare, worked out once.
    capabilities: Value,
    /// The `clientInfo` and `clientCapabilities` every stateless request carries, made once.
    client_meta: Map<String, Value>,
    log_level: Mutex<Option<String>>,
    pub(crate) timeout: Duration,
    /// The server's requests being answered, by their id as JSON text: at most
    /// [`MAX_SERVER_REQUESTS`].
    serving: Mutex<HashMap<String, CancellationToken>>,
    /// The refusals of the server's requests on their way: at most [`MAX_REFUSALS`].
    refusing: AtomicUsize,
    /// The mirrored arguments of each tool, as its last listing said (2026-07-28).
    header_params: Mutex<HashMap<String, Vec<HeaderParam>>>,
    /// Why the connection ended, once it has.
    closed: Mutex<Option<String>>,
    /// Cancelled when the engine is dropped: every task of the connection stops.
    pub(crate) shutdown: CancellationToken,
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl Engine {
    pub(crate) fn new(info: Implementation, handlers: Handlers, timeout: Duration) -> Arc<Self> {
        let capabilities = declared_capabilities(&handlers);
        let mut client_meta = Map::new();
        client_meta.insert(
            META_CLIENT_INFO.into(),
            serde_json::to_value(&info).unwrap_or_default(),
        );
        client_meta.insert(META_CAPABILITIES.into(), capabilities.clone());
        Arc::new(Engine {
            capabilities,
            client_meta,
            wire: OnceLock::new(),
            identity: OnceLock::new(),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            notifications: broadcast::channel(1024).0,
            handlers,
            info,
            log_level: Mutex::new(None),
            timeout,
            serving: Mutex::new(HashMap::new()),
            refusing: AtomicUsize::new(0),
            header_params: Mutex::new(HashMap::new()),
            closed: Mutex::new(None),
            shutdown: CancellationToken::new(),
        })
    }

    pub(crate) fn set_wire(&self, wire: Wire) {
        let _ = self.wire.set(wire);
    }

    pub(crate) fn wire(&self) -> &Wire {
        self.wire.get().expect("the wire is set before any request")
    }

    pub(crate) fn set_identity(&self, identity: ServerIdentity) {
        let _ = self.identity.set(identity);
    }

    pub(crate) fn identity(&self) -> Option<&ServerIdentity> {
        self.identity.get()
    }

    fn stateless(&self) -> bool {
        self.identity.get().is_some_and(|i| i.stateless)
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Notification> {
        self.notifications.subscribe()
    }

    pub(crate) fn set_log_level(&self, level: &str) {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = Some(level.to_owned());
    }

    /// The client capabilities this client declares: those of the handlers it was given.
    pub(crate) fn capabilities(&self) -> &Value {
        &self.capabilities
    }

    /// The metadata a stateless request carries.
    fn request_meta(&self, version: &str) -> Map<String, Value> {
        let mut meta = self.client_meta.clone();
        meta.insert(META_VERSION.into(), version.into());
        if let Some(level) = &*self.log_level.lock().unwrap_or_else(|p| p.into_inner()) {
            meta.insert(META_LOG_LEVEL.into(), level.clone().into());
        }
        meta
    }

    /// Sends a request and waits for its result; in the stateless era, with the request's
    /// metadata, answering what an `input_required` result asks and sending it again.
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<Value, CallError> {
        let stateless = self.stateless() || method == "server/discover";
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(CallError::Usage(format!(
                    "the parameters of `{method}` must be an object, not {other}"
                )));
            }
        };
        if stateless {
            let version = self
                .identity
                .get()
                .map_or(STATELESS_VERSION, |i| i.protocol_version.as_str())
                .to_owned();
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                for (key, value) in self.request_meta(&version) {
                    meta.entry(key).or_insert(value);
                }
            }
        }
        let deadline = tokio::time::Instant::now() + options.timeout.unwrap_or(self.timeout);
        // Shared by the request's rounds: time a person spent signing in extends them all.
        // Only a wire that signs in has one to keep.
        let sign_ins = self
            .wire()
            .signs_in()
            .then(|| Arc::new(SignInClock::default()));
        let mut version_retried = false;
        for _ in 0..MAX_ROUNDS {
            let result = match self
                .round(
                    method,
                    Value::Object(params.clone()),
                    options,
                    (deadline, &sign_ins),
                    stateless,
                )
                .await
            {
                // The server does not speak the revision asked: ask again in one it names
                // that this client speaks too.
                Err(CallError::Rpc(error))
                    if stateless
                        && !version_retried
                        && error.code == crate::protocol::code::UNSUPPORTED_PROTOCOL_VERSION
                        && error.data.as_ref().is_some_and(|data| {
                            data["supported"]
                                .as_array()
                                .is_some_and(|s| s.iter().any(|v| v == STATELESS_VERSION))
                        }) =>
                {
                    version_retried = true;
                    if let Some(Value::Object(meta)) = params.get_mut("_meta") {
                        meta.insert(META_VERSION.into(), STATELESS_VERSION.into());
                    }
                    continue;
                }
                result => result?,
            };
            if !stateless
                || result.get("resultType").and_then(Value::as_str) != Some("input_required")
            {
                return Ok(result);
            }
            let mut responses = Map::new();
            if let Some(requests) = result.get("inputRequests").and_then(Value::as_object) {
                for (key, request) in requests {
                    let method = request["method"].as_str().unwrap_or_default();
                    let params = request.get("params").cloned().unwrap_or(Value::Null);
                    let answer = match &options.forward {
                        Some(forward) => forward(method.to_owned(), params).await,
                        None => self.answer(method, params).await,
                    }
                    .map_err(CallError::Rpc)?;
                    responses.insert(key.clone(), answer);
                }
            }
            params.insert("inputResponses".into(), Value::Object(responses));
            match result.get("requestState") {
                Some(state) => params.insert("requestState".into(), state.clone()),
                None => params.remove("requestState"),
            };
        }
        Err(CallError::Protocol(format!(
            "the server asked for input {MAX_ROUNDS} times in a row for one `{method}`"
        )))
    }

    /// One request on the wire and its answer, before `deadline` (moved on by the time a
    /// person took to sign in, on `sign_ins`); cancelled (and the server told) when the
    /// caller's token fires, the deadline passes or the future is dropped.
    async fn round(
        self: &Arc<Self>,
        method: &str,
        mut params: Value,
        options: &RequestOptions,
        (deadline, sign_ins): (tokio::time::Instant, &Option<Arc<SignInClock>>),
        stateless: bool,
    ) -> Result<Value, CallError> {
        if let Some(reason) = self.closed_reason() {
            return Err(CallError::Closed(reason));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if options.progress.is_some() {
            let meta = params
                .as_object_mut()
                .expect("parameters are an object")
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            meta["progressToken"] = id.into();
        }
        let (sender, receiver) = oneshot::channel();
        self.lock_pending().insert(
            id,
            Pending {
                answer: sender,
                progress: options.progress.clone(),
                forward: options.forward.clone(),
            },
        );
        let mut guard = InFlight {
            engine: Arc::downgrade(self),
            id,
            armed: true,
        };
        let headers = if stateless {
            headers_for(method, &params, &self.header_params)
        } else {
            Vec::new()
        };
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let outgoing = Outgoing::request(message, id, method, headers);
        let cancel = options.cancel.clone().unwrap_or_default();
        let exchange = async {
            self.wire().send(outgoing).await?;
            receiver
                .await
                .map_err(|_| CallError::Closed(self.closed_reason().unwrap_or_default()))
        };
        let exchange = SIGN_IN_CLOCK.scope(sign_ins.clone(), exchange);
        let mut exchange = std::pin::pin!(exchange);
        let outcome = loop {
            let (signing_in, until) = due(deadline, sign_ins.as_deref());
            tokio::select! {
                outcome = &mut exchange => break outcome,
                () = tokio::time::sleep_until(until) => {
                    // Past the deadline, unless a person was signing in meanwhile.
                    if !signing_in && due(deadline, sign_ins.as_deref()).1 <= tokio::time::Instant::now() {
                        break Err(CallError::Timeout {
                            method: method.to_owned(),
                        });
                    }
                }
                () = cancel.cancelled() => break Err(CallError::Cancelled),
            }
        };
        match outcome {
            Ok(answer) => {
                guard.armed = false;
                answer.map_err(CallError::Rpc)
            }
            Err(error @ (CallError::Timeout { .. } | CallError::Cancelled)) => {
                let reason = match &error {
                    CallError::Timeout { .. } => "the client's timeout passed",
                    _ => "the client cancelled the request",
                };
                guard.cancel(reason);
                Err(error)
            }
            Err(error) => {
                guard.armed = false;
                self.lock_pending().remove(&id);
                Err(error)
            }
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), CallError> {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        self.wire().send(Outgoing::notification(message)).await
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a request is still waiting for its answer.
    pub(crate) fn is_waiting(&self, id: i64) -> bool {
        self.lock_pending().contains_key(&id)
    }

    fn closed_reason(&self) -> Option<String> {
        self.closed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The connection is gone: every request waiting fails with `reason`.
    pub(crate) fn close(&self, reason: &str) {
        {
            let mut closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
            if closed.is_none() {
                *closed = Some(reason.to_owned());
            }
        }
        // Dropping the senders wakes every waiter with `Closed`.
        self.lock_pending().clear();
    }

    /// Fails one request with a transport error (its HTTP exchange broke off).
    pub(crate) fn fail(&self, id: i64, error: RpcError) {
        if let Some(pending) = self.lock_pending().remove(&id) {
            let _ = pending.answer.send(Err(error));
        }
    }

    /// Remembers which arguments of each tool are mirrored into headers, from a
    /// `tools/list` page; a tool whose marks are invalid is left out of the page (a client
    /// must not call it with headers it cannot form).
    pub(crate) fn learn_tools(&self, tools: &mut Vec<Value>) {
        let mut known = self.header_params.lock().unwrap_or_else(|p| p.into_inner());
        tools.retain(|tool| {
            let Some(name) = tool["name"].as_str() else {
                return false;
            };
            match header_params(&tool["inputSchema"]) {
                Ok(params) => {
                    known.insert(name.to_owned(), params);
                    true
                }
                Err(problem) => {
                    tracing::warn!(tool = name, %problem, "the server lists a tool whose header marks are invalid; it is left out");
                    false
                }
            }
        });
    }

    /// A message from the server.
    pub(crate) fn receive(self: &Arc<Self>, message: Value) {
        self.receive_for(message, None);
    }

    /// A message from the server, arrived on the answer stream of request `related` (over
    /// HTTP): a request of the server there is made on behalf of that request.
    pub(crate) fn receive_for(self: &Arc<Self>, message: Value, related: Option<i64>) {
        match message {
            Value::Array(batch) => {
                for message in batch {
                    self.receive_for(message, related);
                }
            }
            Value::Object(mut message) => {
                let method = message
                    .get("method")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                match (message.remove("id"), method) {
                    (Some(id), Some(method)) => {
                        let params = message.remove("params").unwrap_or(Value::Null);
                        self.serve(id, method, params, related);
                    }
                    (None, Some(method)) => {
                        let params = message.remove("params").unwrap_or(Value::Null);
                        self.notified(method, params);
                    }
                    (Some(id), None) => {
                        let Some(id) = id.as_i64() else { return };
                        let answer = match (message.remove("result"), message.remove("error")) {
                            (Some(result), _) => Ok(result),
                            (None, Some(error)) => Err(serde_json::from_value(error)
                                .unwrap_or_else(|e| {
                                    RpcError::internal(format!("an unreadable error: {e}"))
                                })),
                            (None, None) => Err(RpcError::internal(
                                "the server answered with neither a result nor an error",
                            )),
                        };
                        if let Some(pending) = self.lock_pending().remove(&id) {
                            let _ = pending.answer.send(answer);
                        }
                    }
                    (None, None) => {
                        tracing::debug!("the server sent a message with neither id nor method");
                    }
                }
            }
            _ => tracing::debug!("the server sent something that is not a JSON-RPC message"),
        }
    }

    fn notified(self: &Arc<Self>, method: String, params: Value) {
        match method.as_str() {
            "notifications/progress" => {
                if let Some(token) = params["progressToken"].as_i64()
                    && let Some(progress) = self
                        .lock_pending()
                        .get(&token)
                        .and_then(|p| p.progress.clone())
                {
                    let report = Progress {
                        progress: params["progress"].as_f64().unwrap_or_default(),
                        total: params["total"].as_f64(),
                        message: params["message"].as_str().map(str::to_owned),
                    };
                    if !progress.offer(report) {
                        tracing::trace!(
                            token,
                            "a progress report is dropped: its receiver is full or gone"
                        );
                    }
                }
            }
            "notifications/cancelled" => {
                let key = params["requestId"].to_string();
                if let Some(token) = self
                    .serving
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&key)
                {
                    token.cancel();
                }
            }
            _ => {}
        }
        let _ = self.notifications.send(Notification { method, params });
    }

    /// Answers one of the server's requests through the user's handlers, unless the server
    /// cancels it first.
    fn serve(self: &Arc<Self>, id: Value, method: String, params: Value, related: Option<i64>) {
        let key = id.to_string();
        // Made on behalf of a request that passes such requests on: to it. Without a
        // relation (stdio, the GET stream), to the one request in flight that does, if any.
        let forward = {
            let pending = self.lock_pending();
            related
                .and_then(|id| pending.get(&id))
                .and_then(|p| p.forward.clone())
                .or_else(|| {
                    let mut forwarding = pending.values().filter_map(|p| p.forward.clone());
                    match (forwarding.next(), forwarding.next()) {
                        (Some(only), None) => Some(only),
                        _ => None,
                    }
                })
        };
        let token = CancellationToken::new();
        {
            let mut serving = self.serving.lock().unwrap_or_else(|p| p.into_inner());
            if serving.len() >= MAX_SERVER_REQUESTS && !serving.contains_key(&key) {
                drop(serving);
                self.refuse(id, &method);
                return;
            }
            serving.insert(key.clone(), token.clone());
        }
        let engine = Arc::downgrade(self);
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            let answer = {
                let Some(handlers) = engine.upgrade().map(|e| e.handlers.clone()) else {
                    return;
                };
                let work = async {
                    match forward {
                        Some(forward) => forward(method.clone(), params).await,
                        None => answer(&handlers, &method, params).await,
                    }
                };
                tokio::select! {
                    answer = work => answer,
                    () = token.cancelled() => return,
                    () = shutdown.cancelled() => return,
                }
            };
            let Some(engine) = engine.upgrade() else {
                return;
            };
            let message = match answer {
                Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
            };
            // Counted until it is sent: an answer waiting on a server that does not read is
            // held within the same limit as one being worked out.
            engine.send_answer(message).await;
            engine
                .serving
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&key);
        });
    }

    /// Answers a request of the server with a busy error, when [`MAX_SERVER_REQUESTS`] are
    /// being answered already.
    fn refuse(self: &Arc<Self>, id: Value, method: &str) {
        if self.refusing.fetch_add(1, Ordering::Relaxed) >= MAX_REFUSALS {
            self.refusing.fetch_sub(1, Ordering::Relaxed);
            tracing::debug!(
                method,
                "a request of the server is dropped: too many are refused already"
            );
            return;
        }
        let error = RpcError::new(
            crate::protocol::code::SERVER_BUSY,
            format!(
                "this client is answering {MAX_SERVER_REQUESTS} requests of the server already, its limit; `{method}` is refused"
            ),
        );
        let message = json!({ "jsonrpc": "2.0", "id": id, "error": error });
        let engine = self.clone();
        tokio::spawn(async move {
            engine.send_answer(message).await;
            engine.refusing.fetch_sub(1, Ordering::Relaxed);
        });
    }

    /// Sends the answer to a request of the server, giving up after the client's timeout
    /// (a server that does not read its input) or when the connection ends.
    async fn send_answer(&self, message: Value) {
        let sent = tokio::select! {
            sent = tokio::time::timeout(self.timeout, self.wire().send(Outgoing::response(message))) => sent,
            () = self.shutdown.cancelled() => return,
        };
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::debug!(%error, "the answer to a server request could not be sent");
            }
            Err(_) => tracing::debug!("the answer to a server request could not be sent in time"),
        }
    }

    /// What the user's handlers answer to a server request.
    pub(crate) async fn answer(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        answer(&self.handlers, method, params).await
    }
}

/// The client capabilities `handlers` declare.
fn declared_capabilities(handlers: &Handlers) -> Value {
    let mut capabilities = Map::new();
    if handlers.roots.is_some() {
        capabilities.insert("roots".into(), json!({ "listChanged": true }));
    }
    if handlers.sampling.is_some() {
        capabilities.insert("sampling".into(), json!({}));
    }
    if handlers.elicitation.is_some() {
        capabilities.insert("elicitation".into(), json!({ "form": {}, "url": {} }));
    }
    for (key, value) in &handlers.extra_capabilities {
        capabilities.insert(key.clone(), value.clone());
    }
    Value::Object(capabilities)
}

/// What `handlers` answer to a server request.
async fn answer(handlers: &Handlers, method: &str, params: Value) -> Result<Value, RpcError> {
    {
        match method {
            "ping" => Ok(json!({})),
            "roots/list" => match &handlers.roots {
                Some(roots) => {
                    let roots = roots.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    Ok(json!({ "roots": roots }))
                }
                None => Err(RpcError::method_not_found(method)),
            },
            "sampling/createMessage" => match &handlers.sampling {
                Some(handler) => handler(params).await,
                None => Err(RpcError::method_not_found(method)),
            },
            "elicitation/create" => match &handlers.elicitation {
                Some(handler) => handler(params).await,
                None => Err(RpcError::method_not_found(method)),
            },
            _ => Err(RpcError::method_not_found(method)),
        }
    }
}

/// The standard headers of a stateless request over HTTP: the revision, its method, the name
/// it is about, and a tool's mirrored arguments.
fn headers_for(
    method: &str,
    params: &Value,
    mirrored: &Mutex<HashMap<String, Vec<HeaderParam>>>,
) -> Vec<(String, String)> {
    let version = params["_meta"][META_VERSION]
        .as_str()
        .unwrap_or(STATELESS_VERSION);
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), version.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            params["uri"].as_str()
        }
        "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        headers.push(("Mcp-Name".to_owned(), header_text(name)));
    }
    if method == "tools/call"
        && let Some(name) = params["name"].as_str()
        && let Some(params_of_tool) = mirrored.lock().unwrap_or_else(|p| p.into_inner()).get(name)
    {
        for param in params_of_tool {
            let Some(value) = param.value_in(&params["arguments"]) else {
                continue;
            };
            let text = match value {
                Value::String(s) => header_text(s),
                other => other.to_string(),
            };
            headers.push((format!("Mcp-Param-{}", param.name), text));
        }
    }
    headers
}

/// A header value the way 2026-07-28 writes text that a header cannot hold as is: Base64
/// inside `=?base64?…?=` when it is not printable ASCII or has edge whitespace.
fn header_text(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !text.starts_with([' ', '\t'])
        && !text.ends_with([' ', '\t'])
        && !text.starts_with("=?base64?");
    if plain {
        text.to_owned()
    } else {
        use base64::Engine as _;
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    }
}

/// A request waiting for its answer: dropped while armed (the caller gave up on the future),
/// the server is told the request is cancelled.
struct InFlight {
    engine: Weak<Engine>,
    id: i64,
    armed: bool,
}

impl InFlight {
    fn cancel(&mut self, reason: &str) {
        self.armed = false;
        let Some(engine) = self.engine.upgrade() else {
            return;
        };
        if engine.lock_pending().remove(&self.id).is_none() {
            return;
        }
        engine.wire().abandon(self.id);
        if engine.stateless() && matches!(engine.wire(), Wire::Http(_)) {
            // A stateless request over HTTP is cancelled by closing its exchange, done above.
            return;
        }
        let id = self.id;
        let reason = reason.to_owned();
        tokio::spawn(async move {
            let params = json!({ "requestId": id, "reason": reason });
            let _ = engine.notify("notifications/cancelled", params).await;
        });
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.armed {
            self.cancel("the client no longer waits for the answer");
        }
    }
}

/// Whether a person is signing in for the request, and when to look at its deadline next:
/// the deadline moved on by the time people took to sign in, and while one is, a look a
/// second from now at the earliest.
fn due(
    deadline: tokio::time::Instant,
    sign_ins: Option<&SignInClock>,
) -> (bool, tokio::time::Instant) {
    let (taken, signing_in) = sign_ins.map_or((Duration::ZERO, false), SignInClock::taken);
    let due = deadline + taken;
    if signing_in {
        (
            true,
            due.max(tokio::time::Instant::now() + Duration::from_secs(1)),
        )
    } else {
        (false, due)
    }
}
