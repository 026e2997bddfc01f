//! The HTTP+SSE transport of protocol revision 2024-11-05, for clients that predate
//! Streamable HTTP: `GET /sse` opens a stream whose first event names the endpoint to POST
//! messages to; every answer travels on that stream. Both sit beside the Streamable HTTP
//! endpoint: with the endpoint at `/api/mcp`, they are `/api/sse` and `/api/messages`.
//!
//! The routes are in the endpoint's route table, so the guard checks them as it checks the
//! endpoint; here they get the endpoint's other rules too: a JSON `Content-Type`, a limit on
//! requests in flight per session, a limit on sessions in total and per client, and a
//! session answers only the caller that opened it.

use std::sync::Arc;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, Method, Response, StatusCode};
use axum::routing::{MethodRouter, get, post};
use serde::Deserialize;
use tokio::sync::{Semaphore, mpsc};

use super::endpoint::Body_;
use super::session_table::{Client, LegacySession};
use super::state::{HttpState, json_error};
use crate::auth::AuthInfo;
use crate::server::Routed;
use crate::session::{Outbound, RequestChannel, Session};

/// How many bytes of answers may wait for a legacy session's stream before the session's
/// new requests are refused.
const LEGACY_BACKLOG: usize = 1 << 20;

/// The two routes, beside the endpoint's path.
pub(super) fn routes(path: &str) -> Vec<(String, Method, MethodRouter<Arc<HttpState>>)> {
    let base = path.rsplit_once('/').map_or("", |(parent, _)| parent);
    vec![
        (format!("{base}/sse"), Method::GET, get(open)),
        (format!("{base}/messages"), Method::POST, post(message)),
    ]
}

/// Removes a legacy session when its stream ends.
struct Unregister {
    state: Arc<HttpState>,
    id: String,
}

impl Drop for Unregister {
    fn drop(&mut self) {
        if let Some(legacy) = self.state.legacy.map().remove(&self.id) {
            legacy.session.cancel_all();
        }
    }
}

async fn open(
    State(state): State<Arc<HttpState>>,
    auth: Option<Extension<Arc<AuthInfo>>>,
    peer: Option<Extension<ConnectInfo<std::net::SocketAddr>>>,
) -> Response<Body> {
    let client = Client::of(
        auth.as_ref().map(|Extension(a)| a.as_ref()),
        peer.map(|Extension(ConnectInfo(p))| p),
    );
    let Some(id) = super::session_table::new_session_id() else {
        return json_error(StatusCode::INTERNAL_SERVER_ERROR, "cannot create a session");
    };
    let (out, mut frames) = Outbound::new();
    let session = Arc::new(Session::new(out.clone()));
    {
        // The endpoint's sessions count too: one client, one quota over both transports.
        let streamable = state.sessions.held_by(&client);
        let mut map = state.legacy.map();
        if map.len() + streamable.in_all >= state.options.max_sessions {
            return json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many open sessions: retry later",
            );
        }
        let mine = map.values().filter(|s| s.client == client).count() + streamable.by_client;
        if client != Client::Unknown && mine >= state.options.max_sessions_per_client {
            return json_error(
                StatusCode::TOO_MANY_REQUESTS,
                "this client has as many open sessions as it may: close one first",
            );
        }
        map.insert(
            id.clone(),
            LegacySession {
                session: Arc::clone(&session),
                out: out.clone(),
                calls: state.sessions.calls_of(&client),
                client,
                in_flight: Arc::new(Semaphore::new(
                    state.options.max_in_flight_per_session.max(1),
                )),
            },
        );
    }
    state.server.register_session(&session);
    // One event at a time: the answers not yet written wait in the session's queue, where
    // the backlog above counts them (in a channel of their own they would not be counted).
    let (tx, rx) = mpsc::channel::<Bytes>(1);
    // Relative to the stream's own URL, so it stays right under any prefix a proxy or an
    // enclosing router adds.
    let endpoint = super::sse::event(
        None,
        Some("endpoint"),
        format!("messages?sessionId={id}").as_bytes(),
    );
    let guard = Unregister {
        state: Arc::clone(&state),
        id,
    };
    let shutdown = state.shutdown.clone();
    let every = state.options.sse_keep_alive;
    tokio::spawn(async move {
        let _guard = guard;
        if tx.send(endpoint).await.is_err() {
            return;
        }
        let mut keep_alive = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            let frame = tokio::select! {
                frame = frames.recv() => frame,
                () = tx.closed() => return,
                () = shutdown.cancelled() => return,
                _ = keep_alive.tick() => {
                    if tx.send(super::sse::KEEP_ALIVE).await.is_err() {
                        return;
                    }
                    continue;
                }
            };
            match frame {
                Some(frame) if !frame.is_empty() => {
                    let event = super::sse::event(None, Some("message"), &frame);
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
                _ => return,
            }
        }
    });
    super::events::sse_body(rx)
}

#[derive(Deserialize)]
struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

// An axum handler takes what it reads of the request as arguments.
#[allow(clippy::too_many_arguments)]
async fn message(
    State(state): State<Arc<HttpState>>,
    auth: Option<Extension<Arc<AuthInfo>>>,
    query: Result<Query<SessionQuery>, axum::extract::rejection::QueryRejection>,
    peer: Option<Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    // Refused as every other refusal is, with a JSON-RPC error body.
    let Ok(Query(query)) = query else {
        return json_error(
            StatusCode::BAD_REQUEST,
            "the query must name one session: `?sessionId=` as the endpoint event gave it",
        );
    };
    if !super::media::is_json_body(&headers) {
        return json_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (Content-Type: application/json)",
        );
    }
    let caller = auth.map(|Extension(a)| a);
    let found = state.legacy.map().get(&query.session_id).cloned();
    // A session opened with a token answers that token's subject only; to anyone else it
    // does not exist.
    let Some(legacy) = found.filter(|s| s.client.admits(caller.as_deref())) else {
        return json_error(
            StatusCode::NOT_FOUND,
            "unknown session: open GET /sse first",
        );
    };
    // Only requests take slots, as at the endpoint: the client's answer to a server request
    // (or its cancellation) must get through to the call that holds one.
    let slots = if Body_::of(&state.server, &body).asks() {
        let Ok(permit) = Arc::clone(&legacy.in_flight).try_acquire_owned() else {
            return json_error(
                StatusCode::TOO_MANY_REQUESTS,
                "too many requests in flight for this session",
            );
        };
        let Ok(client_call) = state.sessions.begin_call(legacy.calls.as_ref()) else {
            return json_error(
                StatusCode::TOO_MANY_REQUESTS,
                "too many requests in flight for this client, over all its sessions",
            );
        };
        // Every answer travels on the session's one stream: a client that posts faster than
        // it reads would make the server hold the answers without end.
        if legacy.out.queued_bytes() > LEGACY_BACKLOG {
            return json_error(
                StatusCode::TOO_MANY_REQUESTS,
                "this session's stream holds answers its client has not read: read them first",
            );
        }
        Some((permit, client_call))
    } else {
        None
    };
    let mut channel = RequestChannel::new(legacy.out.clone());
    channel.auth = caller;
    let peer = peer.map(|Extension(axum::extract::ConnectInfo(p))| p);
    channel.http = Some(Arc::new(crate::session::HttpRequest::new(
        method, uri, headers, peer,
    )));
    let out = legacy.out;
    match state.server.route(&legacy.session, &body, &channel) {
        Routed::Reply(Some(frame)) => out.send(frame),
        Routed::Reply(None) => {}
        Routed::Deferred(call) => {
            state.tasks.spawn(async move {
                let _slots = slots;
                if let Some(frame) = call.await {
                    out.send(frame);
                }
            });
        }
    }
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}
