//! The endpoint's three methods. POST carries one message (or a 2025-03-26 batch) and is
//! served in named stages — admit, find its session, take its slots, respond (JSON, or an
//! SSE stream when the handler sends anything before its response), share what it changed;
//! GET opens the session's own stream, or resumes one; DELETE ends the session.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, oneshot};

use super::events::{CloseSignal, SseOptions, parse_event_id, sse_response};
use super::media::{accepts, accepts_answer, is_json_body};
use super::memo::{ConnectionMemo, HeaderMemo};
use super::session_table::{Client, ClientCall, HttpSession, Lookup};
use super::state::{HttpState, json_error, json_response};
use crate::auth::AuthInfo;
use crate::cluster::SessionRecord;
use crate::protocol::{Envelope, Implementation, ProtocolVersion};
use crate::server::Routed;
use crate::server::stateless::{STATELESS_VERSIONS, StatelessParams};
use crate::session::{
    HttpRequest, Negotiated, Outbound, OutboundQueue, RequestChannel, Session, StreamControl,
};

/// Header names made once: a lookup by `&str` parses the name every time.
pub(super) static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
pub(super) static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// How many bytes of one request's notifications may wait for a client that does not read
/// its response stream before more are dropped (responses are always kept).
const REQUEST_STREAM_BUDGET: usize = 1 << 20;
use super::headers::VERSION_HEADER;

/// The shape of a POST body.
pub(super) enum Body_ {
    /// One request: answered with its response.
    Request { initialize: bool, listen: bool },
    /// A notification, a response, or a batch of only those: answered with 202.
    NoResponse,
    /// A batch holding requests.
    Batch,
    /// Not JSON-RPC at all: answered with 400 and the error.
    Malformed,
}

impl Body_ {
    /// The shape of `body`, read as the dispatch reads it.
    #[cfg(feature = "legacy-sse")]
    pub(super) fn of(server: &crate::server::Server, body: &[u8]) -> Body_ {
        server
            .read(body)
            .map_or_else(|_| classify(body), |message| shape_of(&message))
    }

    /// Whether the body asks for an answer: only such bodies take the slots of requests in
    /// flight. A notification or a response (the client's answer to a server request, or a
    /// cancellation) is handled at once, and refusing it could leave the very requests that
    /// hold the slots waiting for ever.
    pub(super) fn asks(&self) -> bool {
        matches!(self, Body_::Request { .. } | Body_::Batch)
    }
}

/// The shape of a message the server read (see [`Server::read`](crate::server::Server::read)).
fn shape_of(message: &Envelope<'_>) -> Body_ {
    match message.asks() {
        Some(method) => Body_::Request {
            initialize: method == "initialize",
            listen: method == "subscriptions/listen",
        },
        None => Body_::NoResponse,
    }
}

/// The shape of a body the server did not read as one message: a batch, or a message that
/// nests past the server's limit (its shape still decides its status), or no message.
fn classify(body: &[u8]) -> Body_ {
    let Ok(text) = std::str::from_utf8(body) else {
        return Body_::Malformed;
    };
    if text.trim_start().starts_with('[') {
        // Each item read as the dispatch reads it (an item that is itself an array is no
        // message, so it asks for nothing).
        return match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(items)
                if items
                    .iter()
                    .any(|item| Envelope::parse(item.get()).is_ok_and(|m| m.asks().is_some())) =>
            {
                Body_::Batch
            }
            Ok(items) if !items.is_empty() => Body_::NoResponse,
            _ => Body_::Malformed,
        };
    }
    Envelope::parse(text).map_or(Body_::Malformed, |message| shape_of(&message))
}

/// The id of the request a body holds, to answer a refusal to it.
fn request_id(body: &[u8]) -> Option<crate::protocol::RequestId> {
    #[derive(Deserialize)]
    struct Id {
        id: Option<crate::protocol::RequestId>,
    }
    serde_json::from_slice::<Id>(body).ok()?.id
}

/// An HTTP refusal: the status and the message of its JSON-RPC error body.
type Refusal = (StatusCode, String);

fn refused((status, message): Refusal) -> Response<Body> {
    json_error(status, &message)
}

/// The protocol revision a request names in `MCP-Protocol-Version`; absent means 2025-03-26,
/// as the specification says. `Err` for a revision this server does not know.
fn header_version(sent: Option<&HeaderValue>) -> Result<ProtocolVersion, Refusal> {
    match sent {
        None => Ok(ProtocolVersion::V2025_03_26),
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                (
                    StatusCode::BAD_REQUEST,
                    format!(
                        "unsupported MCP-Protocol-Version {:?}; supported: {}",
                        value,
                        ProtocolVersion::HANDSHAKE
                            .map(ProtocolVersion::as_str)
                            .join(", ")
                    ),
                )
            }),
    }
}

/// The HTTP status of a stateless-era error response, when it is not 200.
fn stateless_error_status(frame: &[u8]) -> Option<StatusCode> {
    use crate::protocol::code;
    use serde::de::IgnoredAny;
    // Read without building the message: a result is skipped, not parsed into values.
    #[derive(serde::Deserialize)]
    struct Frame {
        error: Option<Error>,
    }
    #[derive(serde::Deserialize)]
    struct Error {
        code: i64,
        data: Option<Data>,
    }
    #[derive(serde::Deserialize)]
    struct Data {
        #[serde(rename = "invalidMeta")]
        invalid_meta: Option<IgnoredAny>,
    }
    if !super::security::may_be_error(frame) {
        return None;
    }
    let error = serde_json::from_slice::<Frame>(frame).ok()?.error?;
    match i32::try_from(error.code).ok()? {
        code::METHOD_NOT_FOUND => Some(StatusCode::NOT_FOUND),
        code::HEADER_MISMATCH
        | code::MISSING_CLIENT_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION => Some(StatusCode::BAD_REQUEST),
        code::INVALID_PARAMS if error.data.is_some_and(|d| d.invalid_meta.is_some()) => {
            Some(StatusCode::BAD_REQUEST)
        }
        _ => None,
    }
}

/// The session a request names in `Mcp-Session-Id`, for `caller` (see
/// [`SessionTable::find`](super::session_table::SessionTable::find)).
async fn session_of(
    state: &HttpState,
    headers: &HeaderMap,
    (caller, peer): (Option<&AuthInfo>, Option<std::net::SocketAddr>),
) -> Result<(Arc<HttpSession>, Option<SessionRecord>), Refusal> {
    let Some(id) = headers.get(&SESSION_HEADER).and_then(|h| h.to_str().ok()) else {
        return Err((
            StatusCode::BAD_REQUEST,
            "missing Mcp-Session-Id header: send `initialize` first and echo the id it returns"
                .into(),
        ));
    };
    state
        .sessions
        .find(id, caller, peer)
        .await
        .map_err(|e| match e {
            Lookup::Unknown => (
                StatusCode::NOT_FOUND,
                "unknown or expired session: send `initialize` to start a new one".to_owned(),
            ),
            Lookup::Unreachable(e) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
            Lookup::NoRoom(no_room) => no_room_refusal(no_room),
        })
}

/// The answer when no session can be made.
fn no_room_refusal(no_room: super::session_table::NoRoom) -> Refusal {
    match no_room {
        super::session_table::NoRoom::Full => (
            StatusCode::SERVICE_UNAVAILABLE,
            "every session is busy serving requests: retry once one is done".to_owned(),
        ),
        super::session_table::NoRoom::ClientFull => (
            StatusCode::TOO_MANY_REQUESTS,
            "this client holds as many sessions as it may, each busy: end one (DELETE) or \
             retry once one is done"
                .to_owned(),
        ),
        super::session_table::NoRoom::NoId => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot create a session".to_owned(),
        ),
    }
}

/// What admitting a POST found out about it.
struct Admitted<'a> {
    shape: Body_,
    /// The message, read once here for its shape and routed as read, when the body is one.
    message: Option<Envelope<'a>>,
    /// It belongs to the stateless era (its `_meta` or `MCP-Protocol-Version` says so).
    stateless_era: bool,
    /// What the headers' check read of the message's parameters, handed to the dispatch.
    stateless_params: Option<StatelessParams<'a>>,
    /// The revision its headers name (the handshake era).
    version: ProtocolVersion,
    /// Its `Accept` allows an SSE stream for an answer.
    takes_stream: bool,
}

/// The session a POST is served in.
struct Served {
    /// The HTTP session, when the request has one.
    http: Option<Arc<HttpSession>>,
    session: Arc<Session>,
    /// `initialize` opened it with this request.
    new: bool,
    /// Its shared record before the request, to tell what the request changed.
    before: Option<SessionRecord>,
}

/// The slots a request holds while it is served.
type Permit = (OwnedSemaphorePermit, Option<ClientCall>);

/// A POST, in stages: admit it (media types, headers, revision), find or open its
/// session, take its slots in flight, route it, respond (JSON, or an SSE stream when the
/// handler sends anything before its response), and share what it changed.
pub(super) async fn post(
    State(state): State<Arc<HttpState>>,
    auth: Option<Extension<Arc<AuthInfo>>>,
    peer: Option<Extension<ConnectInfo<std::net::SocketAddr>>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let auth = auth.map(|Extension(a)| a);
    let peer = peer.map(|Extension(ConnectInfo(p))| p);
    post_checked(state, (auth, peer), None, method, uri, headers, body).await
}

/// A POST to the endpoint straight from the connection, without the router: through the
/// same [`guard`](super::guard) as every routed request, then served as [`post`] serves it.
/// Most requests a server answers are these; the router's matching, its middleware's
/// boxed futures and the handler's extractors cost each of them time for nothing.
pub(super) async fn post_request(
    state: Arc<HttpState>,
    request: axum::http::Request<hyper::body::Incoming>,
    peer: std::net::SocketAddr,
    memo: &ConnectionMemo,
) -> Response<Body> {
    let (mut parts, body) = match super::guard::check(&state, request, Some(&memo.host)).await {
        Ok(checked) => checked,
        Err(refusal) => return refusal,
    };
    let auth = parts.extensions.remove::<Arc<AuthInfo>>();
    post_checked(
        state,
        (auth, Some(peer)),
        Some(&memo.accept),
        parts.method,
        parts.uri,
        parts.headers,
        body,
    )
    .await
}

/// A POST whose head and body the guard has checked and read.
async fn post_checked(
    state: Arc<HttpState>,
    (auth, peer): (Option<Arc<AuthInfo>>, Option<std::net::SocketAddr>),
    accept_memo: Option<&HeaderMemo<[bool; 2]>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let admitted = match admit(&state, &headers, &body, accept_memo) {
        Ok(admitted) => admitted,
        Err(refusal) => return *refusal,
    };
    // What the handler may read of the request; the token was read already.
    let request = Arc::new(HttpRequest::new(method, uri, headers, peer));
    let headers = request.headers();
    // Where the handler's messages go, before its response.
    let (out, frames) = Outbound::with_budget(REQUEST_STREAM_BUDGET);
    let served = match serve_in(&state, &admitted, headers, auth.as_deref(), peer, &out).await {
        Ok(served) => served,
        Err(refusal) => return refused(refusal),
    };
    let permit = match permit(&state, &admitted, &served) {
        Ok(permit) => permit,
        Err(refusal) => return *refusal,
    };
    let response = respond(
        &state,
        &admitted,
        &served,
        (auth, Arc::clone(&request)),
        &body,
        permit,
        (out, frames),
    )
    .await;
    share(&state, &served, response).await
}

/// Admits a POST: a JSON body, an `Accept` that allows the answer, stateless-era headers
/// that agree with the body, a revision this server speaks.
fn admit<'a>(
    state: &HttpState,
    headers: &HeaderMap,
    body: &'a [u8],
    accept_memo: Option<&HeaderMemo<[bool; 2]>>,
) -> Result<Admitted<'a>, Box<Response<Body>>> {
    if !is_json_body(headers) {
        return Err(Box::new(json_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (Content-Type: application/json)",
        )));
    }
    let [takes_json, takes_stream] = accepts_answer(headers, accept_memo);
    if !takes_json || (!state.options.stateless && !takes_stream) {
        return Err(Box::new(json_error(
            StatusCode::NOT_ACCEPTABLE,
            "the Accept header must allow both application/json and text/event-stream",
        )));
    }
    // Read once: the headers of the stateless era are compared with it, and the dispatch
    // routes it.
    let message = state.server.read(body).ok();
    let sent_version = headers.get(&VERSION_HEADER);
    let (stateless_era, stateless_params) = match super::headers::check_stateless(
        headers,
        sent_version,
        body,
        message.as_ref(),
        &state.server,
    ) {
        Some(Err(problem)) => {
            let error =
                crate::protocol::RpcError::new(crate::protocol::code::HEADER_MISMATCH, problem);
            return Err(Box::new(json_response(
                StatusCode::BAD_REQUEST,
                crate::protocol::error_frame(request_id(body).as_ref(), &error),
            )));
        }
        Some(Ok(read)) => (true, read),
        None => (false, None),
    };
    // A stateless-era request names its revision itself; the header only has to agree (and
    // is not read as a handshake revision, whose refusal would be written out for nothing).
    let version = if stateless_era {
        ProtocolVersion::LATEST_HANDSHAKE
    } else {
        header_version(sent_version).map_err(|refusal| Box::new(refused(refusal)))?
    };
    Ok(Admitted {
        shape: message.as_ref().map_or_else(|| classify(body), shape_of),
        message,
        stateless_era,
        stateless_params,
        version,
        takes_stream,
    })
}

/// Finds the session a POST is served in, or opens one for an `initialize`.
async fn serve_in(
    state: &HttpState,
    admitted: &Admitted<'_>,
    headers: &HeaderMap,
    caller: Option<&AuthInfo>,
    peer: Option<std::net::SocketAddr>,
    out: &Outbound,
) -> Result<Served, Refusal> {
    let initialize = matches!(
        admitted.shape,
        Body_::Request {
            initialize: true,
            ..
        }
    );
    let alone = |session: Arc<Session>| Served {
        http: None,
        session,
        new: false,
        before: None,
    };
    if admitted.stateless_era {
        // No session: the request carries everything in its `_meta`, and is served in a
        // session made for it alone, which sends its messages.
        return Ok(alone(Arc::new(Session::for_one_request(out.clone()))));
    }
    if state.options.stateless {
        // An `initialize` negotiates like any other (clients send one first, stateless
        // server or not); every other request stands alone at the header's revision.
        return Ok(alone(if initialize {
            Arc::new(Session::sessionless(Outbound::closed()))
        } else {
            stateless_session(admitted.version)
        }));
    }
    if initialize && headers.get(&SESSION_HEADER).is_none() {
        let client = Client::of(caller, peer);
        #[cfg(feature = "legacy-sse")]
        let elsewhere = state.legacy.held_by(&client);
        #[cfg(not(feature = "legacy-sse"))]
        let elsewhere = super::session_table::HeldElsewhere::default();
        let http = state
            .sessions
            .open(client, elsewhere)
            .await
            .map_err(no_room_refusal)?;
        return Ok(Served {
            session: Arc::clone(&http.session),
            http: Some(http),
            new: true,
            before: None,
        });
    }
    let (http, before) = session_of(state, headers, (caller, peer)).await?;
    Ok(Served {
        session: Arc::clone(&http.session),
        http: Some(http),
        new: false,
        before,
    })
}

/// Takes the slots a request holds while it is served: its session's and its client's, or
/// one of the endpoint's for requests without a session (listeners apart). Only a body that
/// [asks](Body_::asks) for an answer takes any.
fn permit(
    state: &HttpState,
    admitted: &Admitted<'_>,
    served: &Served,
) -> Result<Option<Permit>, Box<Response<Body>>> {
    if !admitted.shape.asks() {
        return Ok(None);
    }
    if let Some(s) = &served.http {
        let Ok(permit) = Arc::clone(&s.in_flight).try_acquire_owned() else {
            return Err(Box::new(json_error(
                StatusCode::TOO_MANY_REQUESTS,
                "too many requests in flight for this session",
            )));
        };
        let Ok(call) = state.sessions.begin_call(s.calls.as_ref()) else {
            return Err(Box::new(json_error(
                StatusCode::TOO_MANY_REQUESTS,
                "too many requests in flight for this client, over all its sessions",
            )));
        };
        return Ok(Some((permit, call)));
    }
    let slots = match admitted.shape {
        Body_::Request { listen: true, .. } => &state.listeners,
        _ => &state.sessionless_in_flight,
    };
    match Arc::clone(slots).try_acquire_owned() {
        Ok(permit) => Ok(Some((permit, None))),
        Err(_) => {
            let mut busy = json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many requests in flight: retry in a moment",
            );
            busy.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            Err(Box::new(busy))
        }
    }
}

/// Routes the request and answers: JSON when the handler's response is all it sends, an
/// SSE stream when it sends anything first.
#[allow(clippy::too_many_arguments)]
async fn respond(
    state: &Arc<HttpState>,
    admitted: &Admitted<'_>,
    served: &Served,
    (auth, request): (Option<Arc<AuthInfo>>, Arc<HttpRequest>),
    body: &[u8],
    permit: Option<Permit>,
    (out, mut frames): (Outbound, OutboundQueue),
) -> Response<Body> {
    let headers = request.headers();
    // Only the handler closes its stream early (`Context::close_stream`); at shutdown the
    // stream goes on until the call it answers has finished.
    let close = CloseSignal::lazy();
    let channel = RequestChannel {
        out,
        auth,
        round_trip: None,
        task: None,
        // Only watched (a listener ends when it fires), never cancelled through here: the
        // server's own token, without a child per request to make and unlink.
        closing: state.shutdown.clone(),
        stream: Some(Arc::clone(&close) as Arc<dyn StreamControl>),
        stateless_only: admitted.stateless_era,
        http: Some(Arc::clone(&request)),
    };
    let session = &served.session;
    let routed = match &admitted.message {
        Some(message) => state.server.route_read(
            session,
            body,
            message.clone(),
            admitted.stateless_params.clone(),
            &channel,
        ),
        None => state.server.route(session, body, &channel),
    };
    drop(channel);
    // In the stateless era the response is the request's only channel: when the client
    // closes it before the response, the request is cancelled (2026-07-28, Cancellation).
    // A handshake-era client cancels explicitly; its disconnect is not a cancellation.
    let mut abandon = CancelOnDrop(admitted.stateless_era.then(|| Arc::clone(session)));

    // A stateless-era error says its kind in the status too: a method this server lacks is a
    // missing resource (404); metadata, headers or capabilities it cannot accept are a bad
    // request (400). A handler's error response is judged the same way.
    let answer = |frame: Vec<u8>| {
        state.server.trace_out(&frame);
        // A caller without an item's scopes is asked to step up (both eras).
        if let Some(refused) = super::security::insufficient_scope(state, headers, &frame) {
            return refused;
        }
        let status = admitted
            .stateless_era
            .then(|| stateless_error_status(&frame))
            .flatten()
            .unwrap_or(StatusCode::OK);
        json_response(status, frame)
    };
    match routed {
        Routed::Reply(Some(frame)) => match admitted.shape {
            // Not JSON-RPC, or a notification or response that was refused: the transport
            // answers such a body with an error status, never 200.
            Body_::Malformed | Body_::NoResponse => {
                state.server.trace_out(&frame);
                json_response(StatusCode::BAD_REQUEST, frame)
            }
            _ => answer(frame),
        },
        Routed::Reply(None) => no_answer(&admitted.shape),
        Routed::Deferred(mut call) => {
            // Polled once in place first: a handler that finishes at once (most tools) costs
            // no task of its own, and no wake-up of another worker thread.
            let (mut done, sent_first) =
                match std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await {
                    Poll::Ready(frame) => {
                        drop(permit);
                        // What it sent before its response is in the queue already: with
                        // nothing there, the response is all there is, and goes out now.
                        let Some(message) = frames.try_recv() else {
                            abandon.disarm();
                            return match frame {
                                Some(frame) => answer(frame),
                                None => no_answer(&admitted.shape),
                            };
                        };
                        let (done_tx, done) = oneshot::channel();
                        let _ = done_tx.send(frame);
                        (done, Some(message))
                    }
                    Poll::Pending => {
                        let (done_tx, done) = oneshot::channel();
                        state.tasks.spawn(async move {
                            let frame = call.await;
                            // The slot is free before the response can reach the client,
                            // which may send its next request the moment it has it.
                            drop(permit);
                            let _ = done_tx.send(frame);
                        });
                        (done, None)
                    }
                };
            // The first thing the handler sends decides the response: its response alone is
            // plain JSON; anything before it (progress, logs, requests to the client) opens
            // an SSE stream.
            enum First {
                Finished(Result<Option<Vec<u8>>, oneshot::error::RecvError>),
                Message(Option<Vec<u8>>),
            }
            let first = match sent_first {
                Some(message) => First::Message(Some(message)),
                // Messages are looked at before the response, so none sent before it is lost.
                None => tokio::select! {
                    biased;
                    Some(frame) = frames.recv() => First::Message(Some(frame)),
                    finished = &mut done => First::Finished(finished),
                    () = close.token().cancelled() => First::Message(None),
                },
            };
            // On another thread the handler may have sent a message and finished between
            // the two looks above: then it is a stream after all, ending with the response.
            let first = match first {
                First::Finished(Ok(response)) => match frames.try_recv() {
                    Some(frame) => {
                        let (finished, rx) = oneshot::channel();
                        let _ = finished.send(response);
                        done = rx;
                        First::Message(Some(frame))
                    }
                    None => First::Finished(Ok(response)),
                },
                other => other,
            };
            if let First::Finished(_) = first {
                abandon.disarm();
            }
            match (first, &served.http) {
                (First::Finished(Ok(Some(frame))), _) => answer(frame),
                (First::Finished(Ok(None)), _) => no_answer(&admitted.shape),
                (First::Finished(Err(_)), _) => {
                    json_error(StatusCode::INTERNAL_SERVER_ERROR, "the handler stopped")
                }
                // Boxed: a stream is the rarer answer, and its future held inline would
                // make every request's future larger.
                (First::Message(first), Some(http_session)) => {
                    Box::pin(stream_response(
                        state,
                        (http_session, served.before.clone()),
                        session,
                        first,
                        frames,
                        done,
                        close,
                    ))
                    .await
                }
                // A stateless-era request: its notifications (progress, logs) and its
                // response travel on an SSE stream of its own, which no event store keeps.
                (First::Message(first), None)
                    if admitted.stateless_era && admitted.takes_stream =>
                {
                    request_stream_response(state, first, frames, done, abandon)
                }
                // Stateless: no stream carries anything but the response.
                (First::Message(_), None) => {
                    let finished = done.await;
                    abandon.disarm();
                    match finished {
                        Ok(Some(frame)) => answer(frame),
                        _ => no_answer(&admitted.shape),
                    }
                }
            }
        }
    }
}

/// After the response: a session whose `initialize` failed is dropped at once; a new one is
/// shared (and named in `Mcp-Session-Id`); what a request changed in a shared one is
/// written back.
async fn share(state: &HttpState, served: &Served, mut response: Response<Body>) -> Response<Body> {
    let Some(s) = &served.http else {
        return response;
    };
    if !served.new {
        state.sessions.share_changes(s, served.before.clone()).await;
        return response;
    }
    if s.session.negotiated().is_none() {
        state.sessions.remove(&s.id);
        return response;
    }
    if let Err(e) = state.sessions.share_new(s).await {
        return json_error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string());
    }
    if let Ok(value) = HeaderValue::from_str(&s.id) {
        response.headers_mut().insert(SESSION_HEADER.clone(), value);
    }
    response
}

/// The answer to a body that has no response: 202 for notifications and responses; for a
/// request (or a batch holding requests) cancelled before it had one, a stream that ends
/// with no event, since a request's POST is answered with JSON or a stream, never 202.
fn no_answer(shape: &Body_) -> Response<Body> {
    match shape {
        Body_::Request { .. } | Body_::Batch => super::events::empty_sse(),
        Body_::NoResponse | Body_::Malformed => accepted(),
    }
}

fn accepted() -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// A session for one stateless request: initialised at the revision the request names.
fn stateless_session(version: ProtocolVersion) -> Arc<Session> {
    let session = Arc::new(Session::sessionless(Outbound::closed()));
    session.initialize(Negotiated {
        version,
        client_info: Implementation::default(),
        client_capabilities: Default::default(),
    });
    session
}

/// Cancels what a stateless POST has in flight when dropped armed: the client closed the
/// connection before its response was complete.
struct CancelOnDrop(Option<Arc<Session>>);

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(session) = self.0.take() {
            tracing::debug!("the client closed a stateless response stream: cancelling");
            session.cancel_all();
        }
    }
}

/// Answers a stateless-era POST with an SSE stream that carries the handler's messages and
/// then its response, and ends. There is no session, so nothing can resume it.
fn request_stream_response(
    state: &Arc<HttpState>,
    first: Option<Vec<u8>>,
    mut frames: OutboundQueue,
    mut done: oneshot::Receiver<Option<Vec<u8>>>,
    mut abandon: CancelOnDrop,
) -> Response<Body> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    let server = state.server.clone();
    let every = state.options.sse_keep_alive;
    let event = move |frame: Vec<u8>| {
        server.trace_out(&frame);
        super::sse::event(None, None, &frame)
    };
    state.tasks.spawn(async move {
        // Returning early drops `abandon` armed, which cancels the request.
        if let Some(frame) = first.filter(|f| !f.is_empty())
            && tx.send(event(frame)).await.is_err()
        {
            return;
        }
        // A quiet stream (a `subscriptions/listen` most of all) sends comments, so that
        // intermediaries keep it open and a client that left is noticed.
        let mut keep_alive = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tokio::select! {
                biased;
                Some(frame) = frames.recv() => {
                    if !frame.is_empty() && tx.send(event(frame)).await.is_err() {
                        return;
                    }
                }
                finished = &mut done => {
                    while let Some(frame) = frames.try_recv() {
                        if !frame.is_empty() && tx.send(event(frame)).await.is_err() {
                            return;
                        }
                    }
                    abandon.disarm();
                    if let Ok(Some(frame)) = finished {
                        let _ = tx.send(event(frame)).await;
                    }
                    return;
                }
                () = tx.closed() => return,
                _ = keep_alive.tick() => {
                    if tx.send(super::sse::KEEP_ALIVE).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    super::events::sse_body(rx)
}

/// Answers a POST with an SSE stream: a task moves the handler's messages and its response
/// into the event store, and the response follows the store, so a client that loses the
/// stream resumes it with `Last-Event-ID`.
#[allow(clippy::too_many_arguments)]
async fn stream_response(
    state: &Arc<HttpState>,
    (http_session, before): (&Arc<HttpSession>, Option<SessionRecord>),
    session: &Session,
    first: Option<Vec<u8>>,
    mut frames: OutboundQueue,
    mut done: oneshot::Receiver<Option<Vec<u8>>>,
    close: Arc<CloseSignal>,
) -> Response<Body> {
    let stream = http_session.new_stream();
    let store = Arc::clone(&state.options.event_store);
    // Known before anything reads it, so the reader waits for its first event.
    store.open(&stream).await;
    {
        let stream_id = stream.clone();
        let store = Arc::clone(&store);
        let server = state.server.clone();
        let appended = Arc::clone(&store);
        let into = stream.clone();
        let (shared_in, http_session) = (Arc::clone(state), Arc::clone(http_session));
        // Appended in order, one at a time: a store over the network answers each append.
        let append = move |frame: Vec<u8>| {
            let store = Arc::clone(&appended);
            let into = into.clone();
            let server = server.clone();
            async move {
                if !frame.is_empty() {
                    server.trace_out(&frame);
                    store.append(&into, frame).await;
                }
            }
        };
        state.tasks.spawn(async move {
            if let Some(frame) = first {
                append(frame).await;
            }
            loop {
                tokio::select! {
                    biased;
                    // A closed channel (the handler's context is gone) disables this arm.
                    Some(frame) = frames.recv() => append(frame).await,
                    finished = &mut done => {
                        while let Some(frame) = frames.try_recv() {
                            append(frame).await;
                        }
                        // What the handler changed in a shared session is written back
                        // before its response can reach the client, as for a JSON answer.
                        shared_in.sessions.share_changes(&http_session, before).await;
                        if let Ok(Some(frame)) = finished {
                            append(frame).await;
                        }
                        store.complete(&stream_id).await;
                        return;
                    }
                }
            }
        });
    }
    let priming = session
        .negotiated()
        .is_some_and(|n| n.version.has_icons())
        .then_some(state.options.sse_retry);
    sse_response(
        store,
        stream,
        0,
        SseOptions {
            priming_retry: priming,
            close,
            finish: Some(state.drained.clone()),
            on_end: None,
            keep_alive: state.options.sse_keep_alive,
        },
    )
}

pub(super) async fn get(
    State(state): State<Arc<HttpState>>,
    auth: Option<Extension<Arc<AuthInfo>>>,
    peer: Option<Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
) -> Response<Body> {
    let auth = auth.map(|Extension(a)| a);
    let peer = peer.map(|Extension(ConnectInfo(p))| p);
    if state.options.stateless {
        return method_not_allowed(
            "a stateless server has no stream to open; POST messages instead",
        );
    }
    if let Some(refusal) = no_legacy_session(&headers) {
        return refusal;
    }
    if !accepts(&headers, "text/event-stream") {
        return json_error(
            StatusCode::NOT_ACCEPTABLE,
            "the Accept header must allow text/event-stream",
        );
    }
    if let Err(refusal) = header_version(headers.get(&VERSION_HEADER)) {
        return refused(refusal);
    }
    let http_session = match session_of(&state, &headers, (auth.as_deref(), peer)).await {
        Ok((s, _)) => s,
        Err(refusal) => return refused(refusal),
    };
    let store = Arc::clone(&state.options.event_store);
    // A client listens: the session's queue is made now if it was not (it is made when
    // first used), and its own stream is known before it is read or resumed, whether or not
    // the task that fills it has run yet.
    let standalone = http_session.standalone();
    http_session.session.notifications();
    store.open(&standalone).await;
    let resume = headers.get(&LAST_EVENT_ID).and_then(|h| h.to_str().ok());
    let (stream, after) = match resume {
        // Only a stream this session opened, and the store still knows: a name made up
        // after the session's id must not make the store keep anything.
        Some(id) => match parse_event_id(id) {
            Some((stream, seq)) if http_session.owns_stream(stream) => {
                if !store.contains(stream).await || (seq > 0 && store.last(stream).await < seq) {
                    return json_error(
                        StatusCode::BAD_REQUEST,
                        &format!(
                            "Last-Event-ID {id:?}: that stream is no longer kept (it was delivered to its end, or expired) or was never opened"
                        ),
                    );
                }
                (stream.to_owned(), seq)
            }
            _ => {
                return json_error(
                    StatusCode::BAD_REQUEST,
                    &format!("Last-Event-ID {id:?} names no stream of this session"),
                );
            }
        },
        None => (standalone.clone(), store.last(&standalone).await),
    };
    let skips = resume.is_none();
    let standalone = stream == standalone;
    let on_end: Option<Box<dyn FnOnce() + Send>> = if standalone {
        // One standalone stream at a time: a message must not go out on two streams.
        if http_session.standalone_open.swap(true, Ordering::AcqRel) {
            return json_error(
                StatusCode::CONFLICT,
                "this session's stream is already open",
            );
        }
        if skips {
            // What the stream held is skipped: a list change announced there was never
            // heard, so the next one must be announced again.
            state
                .server
                .lists_fetched(&http_session.session, crate::protocol::ALL_LISTS);
        }
        let http_session = Arc::clone(&http_session);
        Some(Box::new(move || {
            http_session.standalone_open.store(false, Ordering::Release)
        }))
    } else {
        None
    };
    let priming = http_session
        .session
        .negotiated()
        .is_some_and(|n| n.version.has_icons())
        .then_some(state.options.sse_retry);
    sse_response(
        store,
        stream,
        after,
        SseOptions {
            priming_retry: priming,
            // The session's own stream never completes: it ends at shutdown. A request's
            // stream ends with the request, which shutdown lets finish.
            close: if standalone {
                CloseSignal::new(state.shutdown.child_token())
            } else {
                CloseSignal::lazy()
            },
            finish: (!standalone).then(|| state.drained.clone()),
            on_end,
            keep_alive: state.options.sse_keep_alive,
        },
    )
}

pub(super) async fn delete(
    State(state): State<Arc<HttpState>>,
    auth: Option<Extension<Arc<AuthInfo>>>,
    headers: HeaderMap,
) -> Response<Body> {
    if state.options.stateless {
        return method_not_allowed("a stateless server has no session to end");
    }
    if let Some(refusal) = no_legacy_session(&headers) {
        return refusal;
    }
    // An unknown revision is refused on every request, ending a session too.
    if let Err(refusal) = header_version(headers.get(&VERSION_HEADER)) {
        return refused(refusal);
    }
    let Some(id) = headers.get(&SESSION_HEADER).and_then(|h| h.to_str().ok()) else {
        return json_error(StatusCode::BAD_REQUEST, "unreadable Mcp-Session-Id header");
    };
    match state
        .sessions
        .end(id, auth.as_deref().map(Arc::as_ref))
        .await
    {
        Ok(true) => Response::new(Body::empty()),
        Ok(false) => json_error(StatusCode::NOT_FOUND, "unknown or expired session"),
        Err(e) => json_error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
    }
}

/// GET and DELETE belong to handshake-era sessions: without a session id, or at a stateless
/// revision, there is no stream to open and nothing to end (405, as the 2026-07-28
/// transport's backward-compatibility section asks).
fn no_legacy_session(headers: &HeaderMap) -> Option<Response<Body>> {
    let modern = headers
        .get(&VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| STATELESS_VERSIONS.contains(&v));
    if modern {
        return Some(method_not_allowed(
            "protocol revision 2026-07-28 has no sessions: POST each request, and open \
             `subscriptions/listen` for notifications",
        ));
    }
    if headers.get(&SESSION_HEADER).is_none() {
        return Some(method_not_allowed(
            "no Mcp-Session-Id header: GET and DELETE act on a session that `initialize` \
             opened; stateless clients POST every request",
        ));
    }
    None
}

fn method_not_allowed(message: &str) -> Response<Body> {
    let mut response = json_error(StatusCode::METHOD_NOT_ALLOWED, message);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}
