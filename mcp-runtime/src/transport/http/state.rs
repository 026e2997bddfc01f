//! What every request of the endpoint shares ([`HttpState`]), and the JSON answers the
//! transport gives on its own.

use std::sync::Arc;

use crate::transport::tracker::Tasks;
use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::session_table::SessionTable;
use crate::protocol::{RpcError, error_frame};
use crate::server::Server;

/// What every request of the endpoint shares.
pub(crate) struct HttpState {
    pub server: Server,
    pub options: HttpOptions,
    pub sessions: SessionTable,
    /// Handler tasks, waited for at shutdown.
    pub tasks: Tasks,
    /// Fires at shutdown: the sessions' own streams end.
    pub shutdown: CancellationToken,
    /// Fires at shutdown once every handler has finished: the streams that follow a request
    /// send what is stored and end, even one whose events the store no longer has.
    pub drained: CancellationToken,
    /// Requests without a session in flight (see `max_in_flight_sessionless`).
    pub sessionless_in_flight: Arc<tokio::sync::Semaphore>,
    /// Open `subscriptions/listen` streams: as many again, counted apart, so that
    /// long-lived listeners cannot take every slot of the requests that come and go.
    pub listeners: Arc<tokio::sync::Semaphore>,
    /// The routes served without a token (the metadata).
    pub public_paths: Vec<String>,
    /// The routes that need a scope of their own, beyond a valid token.
    pub scoped_paths: Vec<(String, String)>,
    #[cfg(feature = "legacy-sse")]
    pub legacy: super::session_table::LegacySessions,
}

/// An HTTP error whose body is a JSON-RPC error object with a null id.
pub(crate) fn json_error(status: StatusCode, message: &str) -> Response<Body> {
    let code = match status {
        StatusCode::NOT_FOUND => -32001,
        StatusCode::BAD_REQUEST
        | StatusCode::NOT_ACCEPTABLE
        | StatusCode::UNSUPPORTED_MEDIA_TYPE => crate::protocol::code::INVALID_REQUEST,
        _ => -32000,
    };
    json_response(status, error_frame(None, &RpcError::new(code, message)))
}

pub(crate) fn json_response(status: StatusCode, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
