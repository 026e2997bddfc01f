//! A server at a URL: Streamable HTTP (each message POSTed; an answer comes back as JSON or
//! as a stream of events, resumed with `Last-Event-ID` when it breaks off; the server's own
//! messages on a GET stream; the session named by `Mcp-Session-Id`), or the legacy HTTP+SSE
//! transport of 2024-11-05 (one GET stream that names where to POST).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use serde_json::Value;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::CallError;
use super::auth::{Authorize, Refusal};
use super::engine::Engine;
use super::sse::{Event, Parser};
use super::wire::{Kind, Outgoing};
use crate::outbound;

const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";
const LAST_EVENT_ID: &str = "last-event-id";
/// The largest JSON answer read.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// How many times a broken stream is resumed in a row before the client gives up on it.
const MAX_RESUMES: u32 = 5;
/// How long to wait before resuming when the server named no delay.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The shortest wait before resuming a stream, whatever delay the server names (`retry: 0`
/// included): the specification has the client respect the server's `retry`, and waiting a
/// little longer than asked still does, while a server that ends each stream at once
/// could otherwise have the client reconnect hundreds of times a second.
const MIN_RETRY: Duration = Duration::from_millis(100);
/// How long the legacy transport's stream may take to name its endpoint.
const ENDPOINT_WAIT: Duration = Duration::from_secs(10);
/// How many times one message is sent again after the authorization was renewed.
const MAX_AUTH_ATTEMPTS: usize = 3;

pub(crate) struct Http {
    shared: Arc<Shared>,
}

struct Shared {
    client: outbound::Client,
    url: Uri,
    state: Mutex<State>,
    headers: Vec<(HeaderName, HeaderValue)>,
    auth: Option<Arc<dyn Authorize>>,
    engine: OnceLock<Weak<Engine>>,
    /// The streams still bringing a request's answer, to close when the caller gives up.
    readers: Mutex<HashMap<i64, AbortHandle>>,
    shutdown: CancellationToken,
}

#[derive(Default)]
struct State {
    session: Option<String>,
    version: Option<String>,
    /// Where to POST, once the legacy transport's stream named it.
    legacy: Option<Uri>,
}

impl Http {
    /// Whether requests carry an authorization that a refusal may renew.
    pub(crate) fn authorizes(&self) -> bool {
        self.shared.auth.is_some()
    }

    pub(crate) fn new(
        url: Uri,
        headers: Vec<(HeaderName, HeaderValue)>,
        auth: Option<Arc<dyn Authorize>>,
        engine: &Arc<Engine>,
    ) -> Result<Self, CallError> {
        let client = outbound::client().map_err(CallError::Transport)?;
        let shared = Arc::new(Shared {
            client,
            url,
            state: Mutex::new(State::default()),
            headers,
            auth,
            engine: OnceLock::new(),
            readers: Mutex::new(HashMap::new()),
            shutdown: engine.shutdown.clone(),
        });
        let _ = shared.engine.set(Arc::downgrade(engine));
        Ok(Http { shared })
    }

    /// The revision to name in `MCP-Protocol-Version` from now on.
    pub(crate) fn set_version(&self, version: &str) {
        self.shared.lock().version = Some(version.to_owned());
    }

    pub(crate) async fn send(&self, outgoing: Outgoing) -> Result<(), CallError> {
        self.shared.send(outgoing).await
    }

    pub(crate) fn abandon(&self, id: i64) {
        if let Some(reader) = self.shared.lock_readers().remove(&id) {
            reader.abort();
        }
    }

    pub(crate) async fn close(&self) {
        let shared = &self.shared;
        for (_, reader) in shared.lock_readers().drain() {
            reader.abort();
        }
        let session = shared.lock().session.clone();
        if let Some(session) = session
            && shared.lock().legacy.is_none()
        {
            let request = shared
                .request(Method::DELETE, &shared.url, Some(&session), None)
                .await;
            if let Ok(request) = request {
                let _ =
                    tokio::time::timeout(Duration::from_secs(5), shared.client.request(request))
                        .await;
            }
        }
        shared.shutdown.cancel();
    }

    /// Opens the GET stream on which a handshake-era server sends what is not an answer
    /// (a server without one, 405, is fine), and returns once the server answered it, so the
    /// requests that follow find it open.
    pub(crate) async fn listen(&self) {
        let shared = self.shared.clone();
        let (opened, answered) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let stop = shared.shutdown.clone();
            tokio::select! {
                () = shared.follow(None, None, Some(opened)) => {}
                () = stop.cancelled() => {}
            }
        });
        let _ = tokio::time::timeout(ENDPOINT_WAIT, answered).await;
    }

    /// Falls back to the legacy HTTP+SSE transport: opens its stream and waits for the
    /// endpoint it names.
    pub(crate) async fn connect_legacy(&self) -> Result<(), CallError> {
        let shared = self.shared.clone();
        let request = shared.request(Method::GET, &shared.url, None, None).await?;
        let response = shared
            .client
            .request(request)
            .await
            .map_err(|e| CallError::Transport(format!("GET {}: {e}", shared.url)))?;
        if !is_event_stream(&response) {
            return Err(CallError::Transport(format!(
                "{} answers neither Streamable HTTP nor the HTTP+SSE transport (GET: {})",
                shared.url,
                response.status()
            )));
        }
        let (found, endpoint) = tokio::sync::oneshot::channel();
        let reader = shared.clone();
        tokio::spawn(async move {
            let stop = reader.shutdown.clone();
            let mut found = Some(found);
            let body = response.into_body();
            let mut on_event = |event: Event| {
                if event.kind.as_deref() == Some("endpoint") {
                    if let Some(found) = found.take() {
                        let _ = found.send(event.data);
                    }
                    return true;
                }
                false
            };
            let read = reader.read_events(body, None, &mut on_event);
            tokio::select! {
                _ = read => {}
                () = stop.cancelled() => return,
            }
            if let Some(engine) = reader.engine() {
                engine.close("the server closed the HTTP+SSE stream");
            }
        });
        let endpoint = tokio::time::timeout(ENDPOINT_WAIT, endpoint)
            .await
            .map_err(|_| {
                CallError::Transport("the HTTP+SSE stream named no endpoint in time".into())
            })?
            .map_err(|_| CallError::Transport("the HTTP+SSE stream ended at once".into()))?;
        let endpoint = resolve(&self.shared.url, endpoint.trim())?;
        // Every message goes there with the client's headers and authorization: a stream
        // reached over https naming `http://` on the same host would have them sent in
        // the clear, and one naming another port would hand them to another service.
        if !same_origin(&endpoint, &self.shared.url) {
            return Err(CallError::Protocol(format!(
                "the HTTP+SSE stream {} names the endpoint {endpoint}, on another origin: \
                 messages are only sent to the stream's own scheme, host and port",
                self.shared.url
            )));
        }
        self.shared.lock().legacy = Some(endpoint);
        Ok(())
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_readers(&self) -> std::sync::MutexGuard<'_, HashMap<i64, AbortHandle>> {
        self.readers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn engine(&self) -> Option<Arc<Engine>> {
        self.engine.get().and_then(Weak::upgrade)
    }

    /// A request to the server with the headers every request carries.
    async fn request(
        &self,
        method: Method,
        url: &Uri,
        session: Option<&str>,
        body: Option<(Bytes, &[(String, String)])>,
    ) -> Result<Request<Full<Bytes>>, CallError> {
        let mut builder = Request::builder().method(method.clone()).uri(url.clone());
        let accept = if method == Method::POST {
            "application/json, text/event-stream"
        } else {
            "text/event-stream"
        };
        builder = builder.header(ACCEPT, accept);
        let version = self.lock().version.clone();
        let named = body.as_ref().is_some_and(|(_, headers)| {
            headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case(VERSION))
        });
        if let Some(version) = version
            && !named
        {
            builder = builder.header(VERSION, version);
        }
        if let Some(session) = session {
            builder = builder.header(SESSION, session);
        }
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(auth) = &self.auth {
            for (name, value) in auth.headers(method.as_str(), url).await? {
                builder = builder.header(name, value);
            }
        }
        let body = match body {
            Some((bytes, headers)) => {
                builder = builder.header(CONTENT_TYPE, "application/json");
                for (name, value) in headers {
                    builder = builder.header(name.as_str(), value.as_str());
                }
                bytes
            }
            None => Bytes::new(),
        };
        builder
            .body(Full::new(body))
            .map_err(|e| CallError::Usage(format!("a header could not be formed: {e}")))
    }

    async fn send(self: &Arc<Self>, outgoing: Outgoing) -> Result<(), CallError> {
        let body = Bytes::from(serde_json::to_vec(&outgoing.message).expect("JSON serialises"));
        let legacy = self.lock().legacy.clone();
        if let Some(endpoint) = legacy {
            let request = self
                .request(
                    Method::POST,
                    &endpoint,
                    None,
                    Some((body, &outgoing.headers)),
                )
                .await?;
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| CallError::Transport(format!("POST {endpoint}: {e}")))?;
            let status = response.status();
            if !status.is_success() {
                let text = read_text(response).await;
                return Err(CallError::Http {
                    status: status.as_u16(),
                    body: text,
                });
            }
            return Ok(());
        }
        let mut attempts = 0;
        loop {
            let session = self.lock().session.clone();
            let request = self
                .request(
                    Method::POST,
                    &self.url,
                    session.as_deref(),
                    Some((body.clone(), &outgoing.headers)),
                )
                .await?;
            // Kept for a refusal only where a refusal is answered (by renewing the token).
            let authorization = self
                .auth
                .as_ref()
                .and_then(|_| request.headers().get(hyper::header::AUTHORIZATION))
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| CallError::Transport(format!("POST {}: {e}", self.url)))?;
            let status = response.status();
            if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
                && let Some(auth) = &self.auth
                && attempts < MAX_AUTH_ATTEMPTS
            {
                let challenge = response
                    .headers()
                    .get_all(hyper::header::WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .collect::<Vec<_>>()
                    .join(", ");
                let dpop_nonce = response
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok());
                let refusal = Refusal {
                    status: status.as_u16(),
                    challenge: &challenge,
                    dpop_nonce,
                    peer: response
                        .extensions()
                        .get::<hyper_util::client::legacy::connect::HttpInfo>()
                        .map(|info| info.remote_addr().ip()),
                    authorization: authorization.as_deref(),
                };
                if auth.challenged(refusal, &self.url, attempts).await? {
                    attempts += 1;
                    continue;
                }
            }
            if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
                return Ok(());
            }
            if status.is_success() {
                if let Kind::Request { method, .. } = &outgoing.kind
                    && method == "initialize"
                    && let Some(session) = response
                        .headers()
                        .get(SESSION)
                        .and_then(|v| v.to_str().ok())
                {
                    self.lock().session = Some(session.to_owned());
                }
                let request = match &outgoing.kind {
                    Kind::Request { id, .. } => Some(*id),
                    _ => None,
                };
                return self.answered(response, request).await;
            }
            if status == StatusCode::NOT_FOUND && session.is_some() {
                return Err(CallError::SessionExpired);
            }
            let text = read_text(response).await;
            // A JSON-RPC error in the body is the server's answer to the request.
            if let Ok(message) = serde_json::from_str::<Value>(&text)
                && message.get("error").is_some()
                && let Kind::Request { id, .. } = &outgoing.kind
                && message.get("id").and_then(Value::as_i64) == Some(*id)
                && let Some(engine) = self.engine()
            {
                engine.receive(message);
                return Ok(());
            }
            return Err(CallError::Http {
                status: status.as_u16(),
                body: text,
            });
        }
    }

    /// Reads a successful answer: one JSON message, or a stream of events read on its own.
    async fn answered(
        self: &Arc<Self>,
        response: Response<Incoming>,
        request: Option<i64>,
    ) -> Result<(), CallError> {
        if is_event_stream(&response) {
            let shared = self.clone();
            let stop = self.shutdown.clone();
            let task = tokio::spawn(async move {
                tokio::select! {
                    () = shared.follow(request, Some(response.into_body()), None) => {}
                    () = stop.cancelled() => {}
                }
                if let Some(id) = request {
                    shared.lock_readers().remove(&id);
                }
            });
            if let Some(id) = request {
                self.lock_readers().insert(id, task.abort_handle());
            }
            return Ok(());
        }
        let body = Limited::new(response.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| CallError::Transport(format!("the answer could not be read: {e}")))?
            .to_bytes();
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let message: Value = serde_json::from_slice(&body)
            .map_err(|e| CallError::Protocol(format!("the server's answer is not JSON: {e}")))?;
        if let Some(engine) = self.engine() {
            engine.receive(message);
        }
        Ok(())
    }

    /// Follows a stream of events: the answer stream of `request` (already open as `body`),
    /// or the GET stream. When it breaks off before the answer came, it is resumed with a GET
    /// naming the last event seen, after the delay the server asked for.
    async fn follow(
        self: &Arc<Self>,
        request: Option<i64>,
        body: Option<Incoming>,
        mut opened: Option<tokio::sync::oneshot::Sender<()>>,
    ) {
        let mut last_id: Option<String> = None;
        let mut retry = DEFAULT_RETRY;
        let mut first = body.is_none();
        let mut body = body;
        let mut resumes = 0;
        // Streams in a row that ended within `DEFAULT_RETRY` of opening.
        let mut brief = 0;
        loop {
            if let Some(stream) = body.take() {
                let opened = tokio::time::Instant::now();
                let mut on_event = |event: Event| {
                    if let Some(id) = &event.id {
                        last_id = Some(id.clone());
                    }
                    if let Some(ms) = event.retry {
                        retry = Duration::from_millis(ms);
                    }
                    false
                };
                if self.read_events(stream, request, &mut on_event).await {
                    resumes = 0;
                }
                if opened.elapsed() < DEFAULT_RETRY {
                    brief += 1;
                } else {
                    brief = 0;
                }
            }
            let waiting = match request {
                Some(id) => self.engine().is_some_and(|e| e.is_waiting(id)),
                None => self.engine().is_some(),
            };
            // An answer stream without event ids cannot be resumed.
            if !waiting || resumes >= MAX_RESUMES || (request.is_some() && last_id.is_none()) {
                break;
            }
            if !first {
                tokio::time::sleep(resume_delay(retry, brief)).await;
            }
            first = false;
            resumes += 1;
            let session = self.lock().session.clone();
            let Ok(mut get) = self
                .request(Method::GET, &self.url, session.as_deref(), None)
                .await
            else {
                break;
            };
            if let Some(id) = &last_id
                && let Ok(value) = HeaderValue::from_str(id)
            {
                get.headers_mut().insert(LAST_EVENT_ID, value);
            }
            let response = self.client.request(get).await;
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            let Ok(response) = response else {
                continue;
            };
            if !is_event_stream(&response) {
                // 405: the server offers no GET stream.
                break;
            }
            body = Some(response.into_body());
        }
        if let Some(id) = request
            && let Some(engine) = self.engine()
        {
            engine.fail(
                id,
                crate::protocol::RpcError::internal(
                    "the server's event stream ended before the answer came",
                ),
            );
        }
    }

    /// Reads events until the stream ends, handing each message to the engine (as arrived
    /// for `request`, on an answer stream) and each event to `on_event` (which returns
    /// whether it consumed the event). Returns whether any event came.
    async fn read_events(
        &self,
        mut body: Incoming,
        request: Option<i64>,
        on_event: &mut (dyn FnMut(Event) -> bool + Send),
    ) -> bool {
        let mut parser = Parser::default();
        let mut saw = false;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { break };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let events = match parser.feed(&data) {
                Ok(events) => events,
                Err(problem) => {
                    tracing::warn!(%problem, "the server's event stream is broken");
                    break;
                }
            };
            for event in events {
                saw = true;
                let consumed = on_event(event.clone());
                if consumed || event.data.is_empty() {
                    continue;
                }
                if !matches!(event.kind.as_deref(), None | Some("message")) {
                    continue;
                }
                match serde_json::from_str::<Value>(&event.data) {
                    Ok(message) => match self.engine() {
                        Some(engine) => {
                            engine.receive_for(message, request);
                            // The answer came: the stream has nothing more for this
                            // request, and is dropped (its connection closed) even if the
                            // server leaves it open.
                            if let Some(id) = request
                                && !engine.is_waiting(id)
                            {
                                return saw;
                            }
                        }
                        None => return saw,
                    },
                    Err(e) => tracing::warn!(error = %e, "an event's data is not JSON"),
                }
            }
        }
        saw
    }
}

/// The wait before resuming a stream, after `brief` streams in a row that ended within
/// [`DEFAULT_RETRY`] of opening: the server's `retry`, but at least [`MIN_RETRY`]; a delay
/// shorter than [`DEFAULT_RETRY`] doubles with each such stream after the first, up to
/// [`DEFAULT_RETRY`]. A server that asks for a second or more is waited for as it asks; one
/// that asks for less and ends every stream at once has the client reconnect about once a
/// second, as a server that names no delay does.
fn resume_delay(retry: Duration, brief: u32) -> Duration {
    let wait = retry.max(MIN_RETRY);
    if wait >= DEFAULT_RETRY {
        return wait;
    }
    let doubled = 2u32.saturating_pow(brief.saturating_sub(1));
    wait.saturating_mul(doubled).min(DEFAULT_RETRY)
}

fn is_event_stream(response: &Response<Incoming>) -> bool {
    response.status().is_success()
        && response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// The first 4 KiB of an answer's body, as text.
async fn read_text(response: Response<Incoming>) -> String {
    let body = Limited::new(response.into_body(), 4096).collect().await;
    body.map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
        .unwrap_or_default()
}

/// Whether two absolute URLs have the same origin (RFC 6454, section 4): the same scheme,
/// host and port, compared without case, with the scheme's default port for a URL that names
/// none (`https://example.com` is `https://example.com:443`, not `http://example.com`).
fn same_origin(a: &Uri, b: &Uri) -> bool {
    fn origin(url: &Uri) -> Option<(String, String, u16)> {
        let scheme = url.scheme_str()?.to_ascii_lowercase();
        let port = match (url.port_u16(), scheme.as_str()) {
            (Some(port), _) => port,
            (None, "http") => 80,
            (None, "https") => 443,
            (None, _) => return None,
        };
        Some((scheme, url.host()?.to_ascii_lowercase(), port))
    }
    origin(a).is_some_and(|a| origin(b) == Some(a))
}

/// `reference` resolved against `base` (RFC 3986, for the forms servers send: absolute,
/// absolute path, or a path relative to the base's directory).
pub(crate) fn resolve(base: &Uri, reference: &str) -> Result<Uri, CallError> {
    let bad = |e: hyper::http::Error| {
        CallError::Protocol(format!("`{reference}` is not a usable URL: {e}"))
    };
    if reference.starts_with("http://") || reference.starts_with("https://") {
        return reference
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| bad(e.into()));
    }
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or_default();
    let path = if let Some(rest) = reference.strip_prefix("//") {
        return format!("{scheme}://{rest}")
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| bad(e.into()));
    } else if reference.starts_with('/') {
        reference.to_owned()
    } else {
        let dir = base.path().rsplit_once('/').map_or("", |(dir, _)| dir);
        format!("{dir}/{reference}")
    };
    format!("{scheme}://{authority}{path}")
        .parse()
        .map_err(|e: hyper::http::uri::InvalidUri| bad(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_retry_is_held_to_a_floor_and_doubles_up_to_a_second_while_streams_end_at_once() {
        let ms = Duration::from_millis;
        let waits: Vec<Duration> = (1..=6).map(|brief| resume_delay(ms(0), brief)).collect();
        assert_eq!(
            waits,
            [ms(100), ms(200), ms(400), ms(800), ms(1000), ms(1000)]
        );
        // A stream that lasted resets the count: the floor again.
        assert_eq!(resume_delay(ms(0), 0), ms(100));
        assert_eq!(resume_delay(ms(300), 1), ms(300));
        assert_eq!(resume_delay(ms(300), 3), ms(1000));
        // A delay of a second or more is the server's to ask for, as it asks.
        assert_eq!(resume_delay(ms(5000), 40), ms(5000));
    }

    #[test]
    fn an_endpoint_is_on_the_streams_origin_only_with_the_same_scheme_host_and_port() {
        let same = |a: &str, b: &str| same_origin(&a.parse().unwrap(), &b.parse().unwrap());
        // The scheme alone differs: the authority is the same, the origin is not.
        assert!(!same(
            "https://example.com/sse",
            "http://example.com/messages"
        ));
        assert!(!same(
            "http://example.com/sse",
            "https://example.com/messages"
        ));
        assert!(!same(
            "https://example.com:8443/sse",
            "http://example.com:8443/m"
        ));
        assert!(!same(
            "http://127.0.0.1:8080/sse",
            "http://127.0.0.1:8081/m"
        ));
        assert!(!same("http://127.0.0.1/sse", "http://localhost/m"));
        // The default port, named or not, and the case of scheme and host.
        assert!(same("https://example.com/sse", "https://example.com:443/m"));
        assert!(same("http://example.com:80/sse", "http://example.com/m"));
        assert!(same("https://Example.COM/sse", "HTTPS://example.com/m?s=1"));
        assert!(!same("https://example.com/sse", "https://example.com:80/m"));
    }

    #[test]
    fn endpoints_resolve_against_the_stream_url() {
        let base: Uri = "http://127.0.0.1:8080/mcp/sse".parse().unwrap();
        assert_eq!(
            resolve(&base, "/messages?sessionId=1").unwrap(),
            "http://127.0.0.1:8080/messages?sessionId=1"
        );
        assert_eq!(
            resolve(&base, "messages?sessionId=1").unwrap(),
            "http://127.0.0.1:8080/mcp/messages?sessionId=1"
        );
        assert_eq!(
            resolve(&base, "https://example.com/m").unwrap(),
            "https://example.com/m"
        );
    }
}
