//! The one outbound HTTP client of the runtime: metadata, key sets and introspection from the
//! authorization server, over HTTPS (plain HTTP only to a loopback address), with a deadline,
//! a cap on the answer's size, and no redirects followed.

use std::time::Duration;

use http_body_util::Full;
use hyper::Request;
use hyper::body::Bytes;
use serde_json::Value;

pub(crate) use crate::outbound::checked;
use crate::outbound::{Client, form_encode};

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
        let body = crate::outbound::form(form);
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
        let answer =
            crate::outbound::exchange(client, url, request, DEADLINE, MAX_ANSWER_BYTES).await?;
        if !answer.status.is_success() {
            return Err(format!("{url} answered {}", answer.status));
        }
        serde_json::from_slice(&answer.body).map_err(|e| format!("{url} answered no JSON: {e}"))
    }
}
