//! The runtime's HTTP client, for what it fetches itself (an authorization server's keys and
//! answers: feature `oauth` as a resource server, feature `client` as an OAuth client) and
//! what it sends (OTLP exports, feature `otel`): hyper over rustls with the ring provider and
//! the system's root certificates, HTTP/1.1. With it, what both OAuth sides share: which URLs
//! may be fetched, form encoding, where an issuer's metadata is, and one bounded exchange.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

pub(crate) type Client =
    hyper_util::client::legacy::Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A client for `https` and `http` URLs; which schemes a caller accepts is its own check.
pub(crate) fn client() -> Result<Client, String> {
    // The crypto provider is named here rather than taken from the process default, so
    // another crate's choice cannot make the first request panic.
    hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
        .map(|builder| {
            let connector = builder.https_or_http().enable_http1().build();
            hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector)
        })
        .map_err(|e| format!("no root certificates to check servers' certificates with: {e}"))
}

/// Whether `url` is plain `http` to another machine: what is sent there (a token, an API key)
/// travels in the clear. `https`, a loopback host, or no URL at all is not.
pub(crate) fn in_the_clear(url: &hyper::Uri) -> bool {
    let host = url.host().unwrap_or("").trim_matches(['[', ']']);
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    url.scheme_str() == Some("http") && !loopback
}

/// `url` as a URI an OAuth exchange may use: `https`, or `http` to a loopback address (an
/// authorization server on the same machine, as in development and tests).
#[cfg(any(feature = "oauth", feature = "client"))]
pub(crate) fn checked(url: &str) -> Result<hyper::Uri, String> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if uri.host().is_none() {
        return Err(format!("`{url}` names no host"));
    }
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if !in_the_clear(&uri) => Ok(uri),
        _ => Err(format!(
            "`{url}` is not an https URL: the authorization server is reached over HTTPS (plain HTTP only on a loopback address)"
        )),
    }
}

/// A value encoded for `application/x-www-form-urlencoded`.
#[cfg(any(feature = "oauth", feature = "client"))]
pub(crate) fn form_encode(value: &str) -> String {
    const FORM: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'*');
    percent_encoding::utf8_percent_encode(value, FORM)
        .to_string()
        .replace("%20", "+")
}

/// Fields encoded as a form (`a=1&b=2`), also the query of an authorization request.
#[cfg(any(feature = "oauth", feature = "client"))]
pub(crate) fn form(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Where an issuer's metadata may be, in order: RFC 8414
/// (`/.well-known/oauth-authorization-server`), then OpenID Connect Discovery
/// (`/.well-known/openid-configuration`, inserted before the issuer's path and appended to
/// it). Never the origin's root for an issuer with a path.
#[cfg(any(feature = "oauth", feature = "client"))]
pub(crate) fn metadata_candidates(issuer: &str) -> Result<Vec<String>, String> {
    let uri = checked(issuer)?;
    if uri.query().is_some() {
        return Err(format!(
            "the issuer `{issuer}` has a query: an issuer URL has none"
        ));
    }
    let scheme = uri.scheme_str().unwrap_or("https");
    let authority = uri.authority().map_or("", |a| a.as_str());
    let path = uri.path().trim_end_matches('/');
    let origin = format!("{scheme}://{authority}");
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    Ok(urls)
}

/// What one exchange brought back.
#[cfg(any(feature = "oauth", feature = "client"))]
pub(crate) struct Answer {
    pub status: hyper::StatusCode,
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

/// Sends `request` to `url` and reads its answer, within `deadline` and at most `cap` bytes
/// of it; redirects are not followed.
#[cfg(any(feature = "oauth", feature = "client"))]
pub(crate) async fn exchange(
    client: &Client,
    url: &str,
    request: hyper::Request<Full<Bytes>>,
    deadline: std::time::Duration,
    cap: usize,
) -> Result<Answer, String> {
    use http_body_util::BodyExt as _;
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        let (parts, body) = response.into_parts();
        let body = http_body_util::Limited::new(body, cap)
            .collect()
            .await
            .map_err(|e| format!("{url}: reading the answer: {e}"))?
            .to_bytes();
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .map_err(|_| format!("{url} did not answer within {} s", deadline.as_secs()))?
}

#[cfg(all(test, any(feature = "oauth", feature = "client")))]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_is_fetched() {
        assert!(checked("https://auth.example.com/jwks").is_ok());
        assert!(checked("http://127.0.0.1:9000/jwks").is_ok());
        assert!(checked("http://[::1]:9000/jwks").is_ok());
        assert!(checked("http://localhost/jwks").is_ok());
        let refused = checked("http://auth.example.com/jwks").unwrap_err();
        assert!(refused.contains("HTTPS"), "{refused}");
        assert!(checked("file:///etc/passwd").is_err());
        assert!(checked("not a url").is_err());
    }

    #[test]
    fn form_values_are_encoded() {
        assert_eq!(form_encode("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(form(&[("a", "1"), ("b c", "x y")]), "a=1&b+c=x+y");
    }

    #[test]
    fn metadata_urls_follow_rfc_8414_then_openid_discovery() {
        assert_eq!(
            metadata_candidates("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_candidates("https://auth.example.com/tenant1/").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert!(metadata_candidates("http://auth.example.com").is_err());
        assert!(metadata_candidates("https://auth.example.com/?tenant=1").is_err());
    }
}
