//! The HTTP+SSE transport of protocol revision 2024-11-05, for clients that predate
//! Streamable HTTP: `GET /sse` opens a stream whose first event names the endpoint to POST
//! messages to; every answer travels on that stream. Both sit beside the Streamable HTTP
//! endpoint: with the endpoint at `/api/mcp`, they are `/api/sse` and `/api/messages`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{Response, StatusCode};
use axum::routing::{get, post};
use serde::Deserialize;
use tokio::sync::mpsc;

use super::{HttpState, json_error};
use crate::server::Routed;
use crate::server::session::{Outbound, RequestChannel, Session};

/// The open legacy sessions: each is one SSE connection.
#[derive(Default)]
pub(crate) struct LegacySessions {
    sessions: Mutex<HashMap<String, (Arc<Session>, Outbound)>>,
}

impl LegacySessions {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Arc<Session>, Outbound)>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(super) fn routes(state: Arc<HttpState>) -> Router<Arc<HttpState>> {
    let base = state
        .options
        .path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent);
    Router::new()
        .route(&format!("{base}/sse"), get(open))
        .route(&format!("{base}/messages"), post(message))
}

/// Removes a legacy session when its stream ends.
struct Unregister {
    state: Arc<HttpState>,
    id: String,
}

impl Drop for Unregister {
    fn drop(&mut self) {
        if let Some((session, _)) = self.state.legacy.map().remove(&self.id) {
            session.cancel_all();
        }
    }
}

async fn open(State(state): State<Arc<HttpState>>) -> Response<Body> {
    let Some(id) = super::sessions::new_session_id() else {
        return json_error(StatusCode::INTERNAL_SERVER_ERROR, "cannot create a session");
    };
    let (out, mut frames) = Outbound::new();
    let session = Arc::new(Session::new(out.clone()));
    state.server.register_session(&session);
    state.legacy.map().insert(id.clone(), (session, out));
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    // Relative to the stream's own URL, so it stays right under any prefix a proxy or an
    // enclosing router adds.
    let endpoint = format!("event: endpoint\ndata: messages?sessionId={id}\n\n");
    let guard = Unregister {
        state: Arc::clone(&state),
        id,
    };
    let shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        let _guard = guard;
        if tx.send(Bytes::from(endpoint)).await.is_err() {
            return;
        }
        loop {
            let frame = tokio::select! {
                frame = frames.recv() => frame,
                () = tx.closed() => return,
                () = shutdown.cancelled() => return,
            };
            match frame {
                Some(frame) if !frame.is_empty() => {
                    let mut event = b"event: message\ndata: ".to_vec();
                    event.extend_from_slice(&frame);
                    event.extend_from_slice(b"\n\n");
                    if tx.send(Bytes::from(event)).await.is_err() {
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

async fn message(
    State(state): State<Arc<HttpState>>,
    Query(query): Query<SessionQuery>,
    body: Bytes,
) -> Response<Body> {
    let Some((session, out)) = state.legacy.map().get(&query.session_id).cloned() else {
        return json_error(
            StatusCode::NOT_FOUND,
            "unknown session: open GET /sse first",
        );
    };
    let channel = RequestChannel::new(out.clone());
    match state.server.route(&session, &body, &channel) {
        Routed::Reply(Some(frame)) => out.send(frame),
        Routed::Reply(None) => {}
        Routed::Deferred(call) => {
            state.tasks.spawn(async move {
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
