//! What keeps the HTTP endpoint safe by default: `Host` and `Origin` allow-lists (against DNS
//! rebinding and cross-site requests), and bearer-token authorisation with RFC 9728
//! protected-resource metadata.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use axum::middleware::Next;

use super::{HttpState, json_error};
use crate::auth::AuthInfo;

/// Why a bearer token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthRejection {
    /// The token is unknown, expired, or malformed: answered with 401.
    InvalidToken(String),
    /// The token is valid but lacks these scopes: answered with 403 `insufficient_scope`.
    InsufficientScope(Vec<String>),
}

/// Checks a bearer token and says who holds it.
///
/// Implemented for closures `Fn(&str) -> Result<AuthInfo, AuthRejection>`; implement the
/// trait for verifiers that must await (introspection, a JWKS fetch).
///
/// ```
/// use mcp_runtime::{AuthInfo, http::AuthRejection};
///
/// let verify = |token: &str| match token {
///     "secret-token" => Ok(AuthInfo::new("ada").scopes(["mcp"])),
///     _ => Err(AuthRejection::InvalidToken("unknown token".into())),
/// };
/// # let _ = mcp_runtime::http::HttpOptions::default().auth(verify);
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`.
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<AuthInfo, AuthRejection>> + Send + 'a>>;
}

impl<F> TokenVerifier for F
where
    F: Fn(&str) -> Result<AuthInfo, AuthRejection> + Send + Sync + 'static,
{
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<AuthInfo, AuthRejection>> + Send + 'a>> {
        let outcome = self(token);
        Box::pin(async move { outcome })
    }
}

/// The host names a request may name in `Host` (any port) by default: loopback only.
pub(crate) const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// Refuses requests whose `Host` or `Origin` is not allowed (403).
pub(crate) async fn check_host_and_origin(
    State(state): State<Arc<HttpState>>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    match host {
        Some(host) if allowed(&state.options.allowed_hosts, host_name(host)) => {}
        Some(host) => {
            return json_error(
                StatusCode::FORBIDDEN,
                &format!("host `{host}` is not allowed; allow it with HttpOptions::allowed_hosts"),
            );
        }
        None => return json_error(StatusCode::FORBIDDEN, "a Host header is required"),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = origin
            .split_once("://")
            .map(|(_, rest)| rest)
            .filter(|rest| !rest.is_empty());
        let ok = host.is_some_and(|h| allowed(&state.options.allowed_origins, host_name(h)));
        if !ok {
            return json_error(
                StatusCode::FORBIDDEN,
                &format!(
                    "origin `{origin}` is not allowed; allow it with HttpOptions::allowed_origins"
                ),
            );
        }
    }
    next.run(request).await
}

/// The host of `host[:port]` (IPv6 literals keep their brackets).
fn host_name(authority: &str) -> &str {
    let authority = authority.split('/').next().unwrap_or(authority);
    if authority.starts_with('[') {
        return authority.split_inclusive(']').next().unwrap_or(authority);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn allowed(list: &[String], host: &str) -> bool {
    list.iter()
        .any(|a| a == "*" || a.eq_ignore_ascii_case(host))
}

/// Authenticates the request when a verifier is configured: 401 without a valid bearer
/// token, 403 without the required scopes; otherwise the caller rides along with the request.
pub(crate) async fn authenticate(
    State(state): State<Arc<HttpState>>,
    mut request: Request,
    next: Next,
) -> Response<Body> {
    let Some(verifier) = &state.options.auth else {
        return next.run(request).await;
    };
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource",
        base_url(&state, request.headers())
    );
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| {
            h.strip_prefix("Bearer ")
                .or_else(|| h.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        return challenge(
            StatusCode::UNAUTHORIZED,
            format!("Bearer resource_metadata=\"{metadata_url}\""),
            "authorisation required: send a bearer token",
        );
    };
    let info = match verifier.verify(token).await {
        Ok(info) => info,
        Err(AuthRejection::InvalidToken(why)) => {
            return challenge(
                StatusCode::UNAUTHORIZED,
                format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata_url}\""),
                &format!("invalid token: {why}"),
            );
        }
        Err(AuthRejection::InsufficientScope(scopes)) => {
            return insufficient_scope(&scopes, &metadata_url);
        }
    };
    let missing: Vec<String> = state
        .options
        .required_scopes
        .iter()
        .filter(|s| !info.has_scope(s))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return insufficient_scope(&state.options.required_scopes, &metadata_url);
    }
    request.extensions_mut().insert(Arc::new(info));
    next.run(request).await
}

fn insufficient_scope(scopes: &[String], metadata_url: &str) -> Response<Body> {
    let scope = scopes.join(" ");
    challenge(
        StatusCode::FORBIDDEN,
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata_url}\""
        ),
        &format!("the token lacks the scopes `{scope}`"),
    )
}

fn challenge(status: StatusCode, www_authenticate: String, message: &str) -> Response<Body> {
    let mut response = json_error(status, message);
    if let Ok(value) = HeaderValue::from_str(&www_authenticate) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `scheme://host` of this server, as configured or as the request names it.
fn base_url(state: &HttpState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.options.resource_base_url {
        return url.trim_end_matches('/').to_owned();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// RFC 9728 protected-resource metadata: where clients get tokens for this server.
pub(crate) async fn protected_resource_metadata(
    State(state): State<Arc<HttpState>>,
    headers: HeaderMap,
) -> Response<Body> {
    let base = base_url(&state, &headers);
    let metadata = serde_json::json!({
        "resource": format!("{base}{}", state.options.path),
        "authorization_servers": state.options.authorization_servers,
        "scopes_supported": state.options.required_scopes,
        "bearer_methods_supported": ["header"],
    });
    let mut response = Response::new(Body::from(metadata.to_string()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_drop_the_port() {
        assert_eq!(host_name("localhost:8080"), "localhost");
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_name("evil.com:80/path"), "evil.com");
    }
}
