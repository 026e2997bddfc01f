//! What keeps the HTTP endpoint safe by default: strict `Host` and `Origin` checks against
//! allow-lists (against DNS rebinding and cross-site requests), and bearer-token
//! authorisation with RFC 9728 protected-resource metadata. [`guard`](super::guard) applies
//! them to every route.

use std::net::{Ipv4Addr, Ipv6Addr};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use std::sync::Arc;
use std::time::Duration;

use super::auth::{AuthRejection, TokenVerifier};
use super::memo::HeaderMemo;
use super::state::{HttpState, json_error};
use crate::auth::AuthInfo;

/// The host of an authority `host[:port]` when it is well formed (RFC 3986 §3.2.2, as HTTP
/// uses it): a registered name of letters, digits, `-`, `.`, `_` and `~`, an IPv4 address, or
/// a bracketed IPv6 address; and an optional port of digits. Anything else — `localhost:evil`,
/// `[::1].evil.com`, user information, a path, quotes — is `None`.
pub(crate) fn authority_host(authority: &str) -> Option<&str> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        host[1..end].parse::<Ipv6Addr>().ok()?;
        match rest {
            "" => (host, None),
            rest => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if let Some(port) = port
        && !(!port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    if port
        .and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|p| p > 65_535)
    {
        return None;
    }
    if host.starts_with('[') {
        return Some(host);
    }
    let name_ok = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    // A name of digits and dots must be a whole IPv4 address (`127.1` is not one).
    let numeric = host.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    (name_ok && (!numeric || host.parse::<Ipv4Addr>().is_ok())).then_some(host)
}

/// The host of an `Origin` (RFC 6454 §7): `http` or `https`, `://`, and an authority with
/// nothing after it. `null`, other schemes and anything malformed are `None`.
pub(crate) fn origin_host(origin: &str) -> Option<&str> {
    let (scheme, authority) = origin.split_once("://")?;
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return None;
    }
    authority_host(authority)
}

/// Whether a host (as [`authority_host`] gives it) is on an allow-list.
pub(crate) fn allowed(list: &[String], host: &str) -> bool {
    list.iter()
        .any(|a| a == "*" || a.eq_ignore_ascii_case(host))
}

/// A refusal: the response to send instead of serving the request.
pub(crate) type Refusal = Box<Response<Body>>;

/// The `Host` and `Origin` checks, on headers whose framing [`guard`](super::guard) has
/// checked: 400 for a malformed value, 403 for one not allowed. `memo`, a connection's
/// own, keeps the `Host` its last request passed with: a request with exactly those bytes
/// (with no `Origin`, and a target without an authority, so that nothing else is judged)
/// passes without parsing it again.
pub(crate) fn check_host_and_origin(
    state: &HttpState,
    headers: &HeaderMap,
    uri_authority: Option<&str>,
    memo: Option<&HeaderMemo<()>>,
) -> Result<(), Refusal> {
    // Every HTTP/1.1 request has a Host (RFC 9112 §3.2), an absolute-form one too; its
    // target's authority must pass as well.
    let Some(host_header) = headers.get(header::HOST) else {
        return Err(Box::new(json_error(
            StatusCode::BAD_REQUEST,
            "a Host header is required",
        )));
    };
    let origin = headers.get(header::ORIGIN);
    let memo = memo.filter(|_| origin.is_none() && uri_authority.is_none());
    if memo.is_some_and(|memo| memo.recall(host_header.as_bytes()).is_some()) {
        return Ok(());
    }
    let host_text = host_header.to_str().map_err(|_| malformed("Host"))?;
    for authority in std::iter::once(host_text).chain(uri_authority) {
        let host = authority_host(authority).ok_or_else(|| malformed("Host"))?;
        if !allowed(&state.options.allowed_hosts, host) {
            return Err(Box::new(json_error(
                StatusCode::FORBIDDEN,
                &format!("host `{host}` is not allowed; allow it with HttpOptions::allowed_hosts"),
            )));
        }
    }
    if let Some(origin) = origin {
        let origin = origin.to_str().map_err(|_| malformed("Origin"))?;
        let allowed_origin =
            origin_host(origin).is_some_and(|host| allowed(&state.options.allowed_origins, host));
        if !allowed_origin {
            return Err(Box::new(json_error(
                StatusCode::FORBIDDEN,
                &format!(
                    "origin `{}` is not allowed: an http or https origin named in \
                     HttpOptions::allowed_origins is",
                    origin.escape_default()
                ),
            )));
        }
    }
    if let Some(memo) = memo {
        memo.remember(host_header.as_bytes(), ());
    }
    Ok(())
}

fn malformed(name: &str) -> Refusal {
    Box::new(json_error(
        StatusCode::BAD_REQUEST,
        &format!("the {name} header is malformed"),
    ))
}

/// The longest a verifier may take over one token (it may ask the authorization server):
/// past it the request is answered 503, to be retried, and the connection is free again.
const VERIFY_DEADLINE: Duration = Duration::from_secs(20);

/// The longest bearer token passed to a verifier: a signed JWT is a few KiB, and a verifier
/// must not be made to hash megabytes for a caller it has not identified.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The bearer token of an `Authorization` header: the scheme is matched without regard to
/// case (RFC 9110 §11.1), and the token must be one `token68` (RFC 6750 §2.1).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim_start();
    let token68 = !token.is_empty()
        && token.trim_end_matches('=').bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        });
    (scheme.eq_ignore_ascii_case("bearer") && token68).then_some(token)
}

/// Authenticates a request when a verifier is configured: 401 without a valid bearer token,
/// 403 without the required scopes. `Ok(None)` without a verifier.
pub(crate) async fn authenticate(
    state: &HttpState,
    headers: &HeaderMap,
) -> Result<Option<AuthInfo>, Refusal> {
    let Some(verifier) = &state.options.auth else {
        return Ok(None);
    };
    match verify(verifier.as_ref(), &state.options.required_scopes, headers).await {
        Ok(info) => Ok(Some(info)),
        // Only a refusal names the metadata: an accepted request does not build its URL.
        Err(denial) => Err(denial.refusal(&metadata_url(state, headers))),
    }
}

/// The 403 for a caller whose token lacks `scope`, with the challenge to step up to it.
pub(crate) fn lacks_scope(state: &HttpState, headers: &HeaderMap, scope: &str) -> Response<Body> {
    *Denial::Scope(vec![scope.to_owned()]).refusal(&metadata_url(state, headers))
}

/// Why a request is not authenticated.
enum Denial {
    /// No bearer token.
    Missing,
    /// A token longer than any this server accepts.
    TooLong,
    Invalid(String),
    /// The verifier could not check the token now.
    Unavailable(String),
    /// The token lacks these scopes.
    Scope(Vec<String>),
}

async fn verify(
    verifier: &dyn TokenVerifier,
    required_scopes: &[String],
    headers: &HeaderMap,
) -> Result<AuthInfo, Denial> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(bearer_token)
        .ok_or(Denial::Missing)?;
    if token.len() > MAX_TOKEN_BYTES {
        return Err(Denial::TooLong);
    }
    let checked = tokio::time::timeout(VERIFY_DEADLINE, verifier.verify(token))
        .await
        .unwrap_or_else(|_| {
            Err(AuthRejection::Unavailable(
                "the token could not be checked in time".into(),
            ))
        });
    let info = checked.map_err(|e| match e {
        AuthRejection::InvalidToken(why) => Denial::Invalid(why),
        AuthRejection::InsufficientScope(scopes) => Denial::Scope(scopes),
        AuthRejection::Unavailable(why) => Denial::Unavailable(why),
    })?;
    if required_scopes.iter().any(|s| !info.has_scope(s)) {
        return Err(Denial::Scope(required_scopes.to_vec()));
    }
    Ok(info)
}

impl Denial {
    fn refusal(self, metadata_url: &str) -> Refusal {
        let invalid = |why: &str| {
            challenge(
                StatusCode::UNAUTHORIZED,
                &[
                    ("error", "invalid_token"),
                    ("resource_metadata", metadata_url),
                ],
                &format!("invalid token: {why}"),
            )
        };
        match self {
            Denial::Missing => challenge(
                StatusCode::UNAUTHORIZED,
                &[("resource_metadata", metadata_url)],
                "authorisation required: send a bearer token (Authorization: Bearer …)",
            ),
            Denial::TooLong => invalid(&format!("longer than {MAX_TOKEN_BYTES} bytes")),
            Denial::Invalid(why) => invalid(&why),
            Denial::Unavailable(why) => {
                let mut response = json_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("the token cannot be checked now ({why}): retry shortly"),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                Box::new(response)
            }
            Denial::Scope(scopes) => {
                let scope = scopes.join(" ");
                challenge(
                    StatusCode::FORBIDDEN,
                    &[
                        ("error", "insufficient_scope"),
                        ("scope", &scope),
                        ("resource_metadata", metadata_url),
                    ],
                    &format!("the token lacks the scopes `{scope}`"),
                )
            }
        }
    }
}

/// The answer to a request refused for the scopes of the item it names (an
/// `INSUFFICIENT_SCOPE` error frame): 403 with the challenge that asks the client to step up
/// to those scopes, the JSON-RPC error as the body. `None` for any other frame.
pub(crate) fn insufficient_scope(
    state: &HttpState,
    headers: &HeaderMap,
    frame: &[u8],
) -> Option<Response<Body>> {
    // Only an error frame can be one; most frames are not looked into.
    if !may_be_error(frame) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(frame).ok()?;
    let error = value.get("error")?;
    if error.get("code")?.as_i64()? != i64::from(crate::protocol::code::INSUFFICIENT_SCOPE) {
        return None;
    }
    let scopes: Vec<&str> = error
        .pointer("/data/scopes")?
        .as_array()?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    let scope = scopes.join(" ");
    let metadata = metadata_url(state, headers);
    let mut response = super::state::json_response(StatusCode::FORBIDDEN, frame.to_vec());
    let value = challenge_value(&[
        ("error", "insufficient_scope"),
        ("scope", &scope),
        ("resource_metadata", &metadata),
    ]);
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Some(response)
}

/// Whether a response frame may be an error response: it has an `"error":` key somewhere
/// (inside a string the quotes would be escaped). A frame without one is not parsed to find
/// out; one SIMD scan, so a large result costs little (with a searcher built once: building
/// one allocates, and costs more than a small frame's scan).
pub(crate) fn may_be_error(frame: &[u8]) -> bool {
    static ERROR_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"error\":"));
    ERROR_KEY.find(frame).is_some()
}

/// An error with a `WWW-Authenticate: Bearer` challenge whose parameters are quoted strings
/// (RFC 9110 §11.2), escaped so no value can end its quotes early.
fn challenge(status: StatusCode, params: &[(&str, &str)], message: &str) -> Refusal {
    let value = challenge_value(params);
    let mut response = json_error(status, message);
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Box::new(response)
}

/// A `Bearer` challenge with these parameters, each a quoted string.
fn challenge_value(params: &[(&str, &str)]) -> String {
    let mut value = String::from("Bearer");
    for (i, (name, text)) in params.iter().enumerate() {
        value.push_str(if i == 0 { " " } else { ", " });
        value.push_str(name);
        value.push_str("=\"");
        for c in text.chars() {
            if c == '"' || c == '\\' {
                value.push('\\');
            }
            value.push(c);
        }
        value.push('"');
    }
    value
}

/// `scheme://host` of this server, as configured or as the request names it (the `Host` is
/// well formed by now: the guard refused anything else).
fn base_url(state: &HttpState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.options.resource_base_url {
        return url.trim_end_matches('/').to_owned();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| authority_host(h).is_some())
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// Where the metadata lives (RFC 9728 §3.1): the well-known path followed by the endpoint's
/// own path, so that several endpoints on one host each have theirs.
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

fn metadata_url(state: &HttpState, headers: &HeaderMap) -> String {
    format!(
        "{}{METADATA_PATH}{}",
        base_url(state, headers),
        state.options.path
    )
}

/// The scopes every token needs, and those the items need.
fn scopes_supported(state: &HttpState) -> Vec<String> {
    let mut scopes: Vec<String> = state.options.required_scopes.clone();
    scopes.extend(state.server.item_scopes().into_iter().map(str::to_owned));
    scopes.sort();
    scopes.dedup();
    scopes
}

/// RFC 9728 protected-resource metadata: where clients get tokens for this server. Served
/// at the path-specific location and, for clients that only try it, at the bare one.
pub(crate) async fn protected_resource_metadata(
    State(state): State<Arc<HttpState>>,
    headers: HeaderMap,
) -> Response<Body> {
    let base = base_url(&state, &headers);
    let metadata = serde_json::json!({
        "resource": format!("{base}{}", state.options.path),
        "authorization_servers": state.options.authorization_servers,
        "scopes_supported": scopes_supported(&state),
        "bearer_methods_supported": ["header"],
    });
    super::state::json_response(StatusCode::OK, metadata.to_string().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_authorities_give_their_host() {
        assert_eq!(authority_host("localhost:8080"), Some("localhost"));
        assert_eq!(authority_host("[::1]:8080"), Some("[::1]"));
        assert_eq!(authority_host("[::1]"), Some("[::1]"));
        assert_eq!(authority_host("127.0.0.1"), Some("127.0.0.1"));
        assert_eq!(authority_host("mcp.example.com"), Some("mcp.example.com"));
    }

    #[test]
    fn malformed_authorities_are_refused() {
        for bad in [
            "localhost:evil.com",
            "[::1].evil.com",
            "[::1]evil",
            "[evil]",
            "localhost:",
            "localhost:99999",
            "user@localhost",
            "localhost/path",
            "evil.com:80/path",
            "local\"host",
            "",
            "127.1",
            "300.0.0.1",
            "a b",
        ] {
            assert_eq!(authority_host(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn origins_must_be_http_or_https_with_a_bare_authority() {
        assert_eq!(origin_host("http://localhost:3000"), Some("localhost"));
        assert_eq!(origin_host("HTTPS://[::1]"), Some("[::1]"));
        for bad in [
            "evil://localhost",
            "null",
            "file://",
            "http://localhost/",
            "http://localhost:evil",
            "localhost",
        ] {
            assert_eq!(origin_host(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_bearer_scheme_is_matched_in_any_case() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER abc"), Some("abc"));
        assert_eq!(
            bearer_token("bEaReR  a.b-c_d~e+f/g=="),
            Some("a.b-c_d~e+f/g==")
        );
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer a b"), None);
        assert_eq!(bearer_token("Bearer \"abc\""), None);
    }
}
