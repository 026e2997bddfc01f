//! The runtime's HTTP client, for what it fetches itself (an authorization server's keys and
//! answers, feature `oauth`) and what it sends (OTLP exports, feature `otel`): hyper over
//! rustls with the ring provider and the system's root certificates, HTTP/1.1.

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
