//! The one outbound HTTP client of the runtime: metadata, key sets and introspection from the
//! authorization server, over HTTPS (plain HTTP only to a loopback address), with a deadline,
//! a cap on the answer's size, and no redirects followed.

use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Request, Uri};
use serde_json::Value;

use crate::outbound::Client;

/// How long one exchange with the authorization server may take, connection included.
const DEADLINE: Duration = Duration::from_secs(10);
/// The largest answer read: metadata and key sets are a few kilobytes.
const MAX_ANSWER_BYTES: usize = 1 << 20;

#[derive(Clone)]
pub(crate) struct Fetcher {
    client: Result<Client, String>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher").finish_non_exhaustive()
    }
}

impl Fetcher {
    pub(crate) fn new() -> Self {
        Fetcher {
            client: crate::outbound::client(),
        }
    }

    /// GETs `url` and parses its JSON answer.
    pub(crate) async fn get_json(&self, url: &str) -> Result<Value, String> {
        let uri = checked(url)?;
        let request = Request::get(uri)
            .header("accept", "application/json")
            .body(Full::default())
            .map_err(|e| format!("{url}: {e}"))?;
        self.exchange(url, request).await
    }

    /// POSTs `form` to `url` (`application/x-www-form-urlencoded`), with HTTP Basic client
    /// authentication when `client` is given, and parses the JSON answer.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        client: Option<(&str, &str)>,
    ) -> Result<Value, String> {
        use base64::Engine as _;
        let uri = checked(url)?;
        let body = form
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let mut request = Request::post(uri)
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded");
        if let Some((id, secret)) = client {
            // RFC 6749 §2.3.1: both halves form-encoded before they are joined.
            let pair = format!("{}:{}", form_encode(id), form_encode(secret));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header("authorization", format!("Basic {basic}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("{url}: {e}"))?;
        self.exchange(url, request).await
    }

    async fn exchange(&self, url: &str, request: Request<Full<Bytes>>) -> Result<Value, String> {
        let client = self.client.as_ref().map_err(Clone::clone)?;
        let exchange = async {
            let response = client
                .request(request)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| format!("{url}: reading the answer: {e}"))?
                .to_bytes();
            if !status.is_success() {
                return Err(format!("{url} answered {status}"));
            }
            serde_json::from_slice(&body).map_err(|e| format!("{url} answered no JSON: {e}"))
        };
        tokio::time::timeout(DEADLINE, exchange)
            .await
            .map_err(|_| format!("{url} did not answer within {} s", DEADLINE.as_secs()))?
    }
}

/// `url` as a URI the fetcher may use: `https`, or `http` to a loopback address (an
/// authorization server on the same machine, as in development and tests).
pub(crate) fn checked(url: &str) -> Result<Uri, String> {
    let uri: Uri = url
        .parse()
        .map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if uri.host().is_none() {
        return Err(format!("`{url}` names no host"));
    }
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if !crate::outbound::in_the_clear(&uri) => Ok(uri),
        _ => Err(format!(
            "`{url}` is not an https URL: the authorization server is reached over HTTPS (plain HTTP only on a loopback address)"
        )),
    }
}

fn form_encode(value: &str) -> String {
    const FORM: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'*');
    percent_encoding::utf8_percent_encode(value, FORM)
        .to_string()
        .replace("%20", "+")
}

#[cfg(test)]
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
    }
}
