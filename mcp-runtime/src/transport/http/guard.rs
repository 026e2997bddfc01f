//! The one gate in front of every route the endpoint serves — the MCP endpoint, the legacy
//! HTTP+SSE routes, the metadata, the metrics, and the fallback for unknown paths. It is applied to the
//! whole router after every route is in it, so a route added later is behind it too; and a
//! standalone server's connections, which hand the endpoint's POSTs to the endpoint without
//! the router, call the same [`check`] first. A check belongs in [`check`], never in the
//! middleware around it. In order, cheapest first:
//!
//! 1. framing: exactly one `Host`, at most one `Origin`, `Authorization`, `Content-Type`
//!    and each MCP header (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`,
//!    `Mcp-Name`, each `Mcp-Param-…`) and `Last-Event-ID` (RFC 9112 §3.2: a request with
//!    several `Host` lines is 400);
//! 2. `Host` and `Origin`: well formed (400) and allowed (403);
//! 3. a declared body over the limit: 413 before any of it is read, so no `100 Continue`;
//! 4. the bearer token, unless the route is public (the metadata only): 401 or 403, and the
//!    route's own scope where it has one (the metrics'); a public route takes no body at
//!    all (413), so a caller without a token can make the server hold nothing;
//! 5. the body, read whole within the body timeout (408) and under the limit (413), so a
//!    handler never waits on a slow client.

use std::future::Future as _;
use std::sync::Arc;
use std::task::Poll;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::middleware::Next;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};

use super::state::{HttpState, json_error};
use super::{endpoint, headers, security};

pub(crate) async fn admit(
    State(state): State<Arc<HttpState>>,
    request: Request,
    next: Next,
) -> Response<Body> {
    match check(&state, request, None).await {
        Ok((parts, body)) => next.run(Request::from_parts(parts, Body::from(body))).await,
        Err(refusal) => refusal,
    }
}

/// The checks, in the order above: the request's head (with the caller, when a token
/// named one, as an `Arc<AuthInfo>` extension) and its whole body; or the refusal to send
/// instead. The one function both ways into the endpoint go through: the router's
/// middleware ([`admit`]) and the connection's own dispatch of the endpoint's POST.
/// Generic over the body, so that the connection's own dispatch hands hyper's body over
/// as it is, not boxed first; that dispatch also hands over its connection's memo of the
/// `Host` that passed ([`ConnectionMemo`](super::memo::ConnectionMemo)).
pub(crate) async fn check<B>(
    state: &HttpState,
    request: axum::http::Request<B>,
    host_memo: Option<&super::memo::HeaderMemo<()>>,
) -> Result<(Parts, Bytes), Response<Body>>
where
    B: axum::body::HttpBody<Data = Bytes>,
    B::Error: Into<axum::BoxError>,
{
    let (mut parts, body) = request.into_parts();
    // One walk through the few headers a request has, rather than a hashed lookup of each
    // name that must not repeat.
    // The MCP headers name one session, one revision, one method, one item and one value of
    // each mirrored argument: a proxy may route on any of them, and one reading the last of
    // two must not see another request than the server, which would read the first.
    static SINGLE: [(&header::HeaderName, &str); 9] = [
        (&header::HOST, "Host"),
        (&header::ORIGIN, "Origin"),
        (&header::AUTHORIZATION, "Authorization"),
        (&header::CONTENT_TYPE, "Content-Type"),
        (&endpoint::SESSION_HEADER, "Mcp-Session-Id"),
        (&headers::VERSION_HEADER, "MCP-Protocol-Version"),
        (&headers::METHOD_HEADER, "Mcp-Method"),
        (&headers::NAME_HEADER, "Mcp-Name"),
        (&endpoint::LAST_EVENT_ID, "Last-Event-ID"),
    ];
    let mut seen = [0u8; SINGLE.len()];
    let mut repeated_param = None;
    for name in parts.headers.iter().map(|(name, _)| name) {
        if let Some(at) = SINGLE.iter().position(|(single, _)| *single == name) {
            seen[at] = seen[at].saturating_add(1);
        } else if name.as_str().starts_with("mcp-param-")
            && repeated_param.is_none()
            && parts.headers.get_all(name).iter().nth(1).is_some()
        {
            repeated_param = Some(name.as_str());
        }
    }
    let repeated = SINGLE
        .iter()
        .zip(seen)
        .find_map(|((_, what), n)| (n > 1).then(|| (*what).to_owned()))
        .or_else(|| repeated_param.map(|name| format!("`{name}`")));
    if let Some(what) = repeated {
        return Err(closing(json_error(
            StatusCode::BAD_REQUEST,
            &format!("more than one {what} header"),
        )));
    }
    let authority = parts
        .uri
        .authority()
        .map(axum::http::uri::Authority::as_str);
    if let Err(refusal) =
        security::check_host_and_origin(state, &parts.headers, authority, host_memo)
    {
        // A request naming a host it may not (or none, or two) is not one to keep a
        // connection open for.
        return Err(closing(*refusal));
    }
    let limit = state.options.max_body_bytes;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(closing(too_large(limit)));
    }
    if state.public_paths.iter().any(|p| p == parts.uri.path()) {
        let has_body = declared.is_some_and(|length| length > 0)
            || parts.headers.contains_key(header::TRANSFER_ENCODING);
        if has_body {
            return Err(closing(json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "this route takes no request body",
            )));
        }
        return Ok((parts, Bytes::new()));
    }
    match security::authenticate(state, &parts.headers).await {
        Ok(Some(caller)) => {
            // A route that needs a scope of its own (the metrics) refuses a token without it.
            let needs = state
                .scoped_paths
                .iter()
                .find(|(path, _)| path == parts.uri.path());
            if let Some((_, scope)) = needs
                && !caller.has_scope(scope)
            {
                return Err(security::lacks_scope(state, &parts.headers, scope));
            }
            parts.extensions.insert(Arc::new(caller));
        }
        Ok(None) => {}
        Err(refusal) => return Err(*refusal),
    }
    // Polled once before the timer is armed: a body that came with the head (most do) is
    // taken at once, without registering a timer and removing it again.
    let mut reading = std::pin::pin!(read_body(body, limit));
    let read = match std::future::poll_fn(|cx| Poll::Ready(reading.as_mut().poll(cx))).await {
        Poll::Ready(read) => Ok(read),
        Poll::Pending => tokio::time::timeout(state.options.body_read_timeout, reading).await,
    };
    let body = match read {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(BodyError::TooLarge)) => return Err(closing(too_large(limit))),
        Ok(Err(BodyError::Broken)) => {
            return Err(closing(json_error(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            )));
        }
        Err(_) => {
            return Err(closing(json_error(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the request body did not arrive within {} ms",
                    state.options.body_read_timeout.as_millis()
                ),
            )));
        }
    };
    Ok((parts, body))
}

enum BodyError {
    TooLarge,
    Broken,
}

/// The body whole, or why not: the limit is counted as the frames arrive, so an
/// undeclared or understated length is cut off at the limit too.
async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, BodyError>
where
    B: axum::body::HttpBody<Data = Bytes>,
    B::Error: Into<axum::BoxError>,
{
    // A small body comes in one frame, which is kept as it is: collecting frames into a
    // list of buffers cost each request an allocation for the list. Frames that follow are
    // joined in one buffer.
    let mut body = std::pin::pin!(Limited::new(body, limit));
    let mut first = Bytes::new();
    let mut joined: Option<Vec<u8>> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            if e.is::<LengthLimitError>() {
                BodyError::TooLarge
            } else {
                BodyError::Broken
            }
        })?;
        // Trailers are not part of the message.
        let Ok(data) = frame.into_data() else {
            continue;
        };
        match &mut joined {
            Some(joined) => joined.extend_from_slice(&data),
            None if first.is_empty() => first = data,
            None if data.is_empty() => {}
            None => {
                let mut both = Vec::with_capacity(first.len() + data.len());
                both.extend_from_slice(&first);
                both.extend_from_slice(&data);
                joined = Some(both);
            }
        }
    }
    Ok(joined.map_or(first, Bytes::from))
}

fn too_large(limit: usize) -> Response<Body> {
    json_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request body is larger than the limit of {limit} bytes"),
    )
}

/// A refusal after which the connection is not reused: the rest of the body the client
/// may still send is not read.
fn closing(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
