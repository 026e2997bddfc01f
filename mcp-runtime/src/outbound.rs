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
    hyper_util::client::legacy::Client<HttpsConnector<HttpConnector<Resolver>>, Full<Bytes>>;

/// A client for `https` and `http` URLs; which schemes a caller accepts is its own check.
pub(crate) fn client() -> Result<Client, String> {
    client_with(Resolver::default())
}

/// A client whose connections go only to addresses within `reach`: for the URLs an MCP
/// server supplies to the client's OAuth flow.
#[cfg(feature = "client")]
pub(crate) fn client_within(reach: &Reach) -> Result<Client, String> {
    client_with(Resolver {
        reach: Some(std::sync::Arc::new(reach.clone())),
    })
}

fn client_with(resolver: Resolver) -> Result<Client, String> {
    // The crypto provider is named here rather than taken from the process default, so
    // another crate's choice cannot make the first request panic.
    hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
        .map(|builder| {
            let mut http = HttpConnector::new_with_resolver(resolver);
            // The scheme is the TLS connector's to check: it passes `https` on to this one.
            http.enforce_http(false);
            let connector = builder.https_or_http().enable_http1().wrap_connector(http);
            hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector)
        })
        .map_err(|e| format!("no root certificates to check servers' certificates with: {e}"))
}

/// How the runtime's HTTP client finds a host's addresses: the system's resolver, and, for a
/// client made [`within`](client_within) a reach, a refusal of a name any of whose addresses
/// is out of it. The check is made where the connection is made, on the addresses it is
/// made to: a name cannot pass with a public address and then be connected to at an
/// internal one (DNS rebinding). An address written as the URL's host is not resolved, and
/// is the caller's to check ([`Reach::checked`]).
#[derive(Clone, Default)]
pub(crate) struct Resolver {
    #[cfg(feature = "client")]
    reach: Option<std::sync::Arc<Reach>>,
}

type Resolving = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = std::io::Result<std::vec::IntoIter<std::net::SocketAddr>>>
            + Send,
    >,
>;

impl tower_service::Service<hyper_util::client::legacy::connect::dns::Name> for Resolver {
    type Response = std::vec::IntoIter<std::net::SocketAddr>;
    type Error = std::io::Error;
    type Future = Resolving;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: hyper_util::client::legacy::connect::dns::Name) -> Self::Future {
        let resolver = self.clone();
        Box::pin(async move {
            // The port is the connector's to set on each address.
            let addresses: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            resolver.check(name.as_str(), &addresses)?;
            Ok(addresses.into_iter())
        })
    }
}

impl Resolver {
    #[cfg(feature = "client")]
    fn check(&self, host: &str, addresses: &[std::net::SocketAddr]) -> std::io::Result<()> {
        let Some(reach) = &self.reach else {
            return Ok(());
        };
        match addresses.iter().find(|a| !reach.allows(a.ip())) {
            Some(out) => Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                reach.refusal(host, out.ip()),
            )),
            None => Ok(()),
        }
    }

    #[cfg(not(feature = "client"))]
    #[allow(clippy::unused_self)]
    fn check(&self, _: &str, _: &[std::net::SocketAddr]) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether `url` is plain `http` to another machine: what is sent there (a token, an API key)
/// travels in the clear. `https`, a loopback host, or no URL at all is not.
pub(crate) fn in_the_clear(url: &hyper::Uri) -> bool {
    url.scheme_str() == Some("http") && !is_loopback(host_of(url))
}

/// The host of `url`, without the brackets of an IPv6 address; empty when it has none.
fn host_of(url: &hyper::Uri) -> &str {
    url.host().unwrap_or("").trim_matches(['[', ']'])
}

/// Whether `host` names this machine: `localhost`, or a loopback address.
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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

/// What kind of address an IP address is, for the rule on where a URL a remote server
/// supplies may lead (see [`Reach`]).
#[cfg(feature = "client")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AddressKind {
    /// Anywhere on the internet.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918, the shared address space of RFC 6598 (where some clouds keep their metadata
    /// service), `fc00::/7`.
    Private,
    /// `169.254.0.0/16` (cloud metadata services among them), `fe80::/10`.
    LinkLocal,
    /// `0.0.0.0/8`, `::`: this host, as most systems connect to it.
    Unspecified,
}

#[cfg(feature = "client")]
impl AddressKind {
    pub(crate) fn of(ip: std::net::IpAddr) -> AddressKind {
        use std::net::IpAddr;
        let v4 = match ip {
            IpAddr::V4(v4) => v4,
            IpAddr::V6(v6) => {
                if let Some(v4) = v6.to_ipv4_mapped() {
                    return AddressKind::of(IpAddr::V4(v4));
                }
                let first = v6.segments()[0];
                return if v6.is_loopback() {
                    AddressKind::Loopback
                } else if v6.is_unspecified() {
                    AddressKind::Unspecified
                } else if first & 0xfe00 == 0xfc00 {
                    AddressKind::Private
                } else if first & 0xffc0 == 0xfe80 {
                    AddressKind::LinkLocal
                } else {
                    AddressKind::Public
                };
            }
        };
        let [a, b, ..] = v4.octets();
        if v4.is_loopback() {
            AddressKind::Loopback
        } else if a == 0 {
            AddressKind::Unspecified
        } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
            AddressKind::Private
        } else if v4.is_link_local() {
            AddressKind::LinkLocal
        } else {
            AddressKind::Public
        }
    }
}

/// Where the URLs an MCP server supplies (its resource metadata, the authorization server
/// it names, that server's endpoints) may lead: public addresses, and addresses of the
/// kinds the MCP server itself is at — a server on loopback may send the client to
/// loopback, one on a private network to that network, and none anywhere else, so that a
/// remote server cannot have the client call the services of the machine or network it
/// runs on (cloud metadata among them).
#[cfg(feature = "client")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reach {
    kinds: Vec<AddressKind>,
}

#[cfg(feature = "client")]
impl Reach {
    /// Public addresses and loopback: where `checked` lets any exchange go, for a URL the
    /// program itself gave.
    pub(crate) fn loopback() -> Reach {
        Reach {
            kinds: vec![AddressKind::Public, AddressKind::Loopback],
        }
    }

    /// Every address: for a URL the program itself gave (an identity provider's endpoint).
    pub(crate) fn any() -> Reach {
        Reach {
            kinds: vec![
                AddressKind::Public,
                AddressKind::Loopback,
                AddressKind::Private,
                AddressKind::LinkLocal,
                AddressKind::Unspecified,
            ],
        }
    }

    /// The reach of the URLs the server at `server` supplies: public addresses, and the kind
    /// of the address the client's connection to it went to (`peer`). Without one, the kinds
    /// of the addresses its host resolves to, when none of them is public (see
    /// [`of_addresses`](Self::of_addresses)).
    pub(crate) async fn of_server(server: &hyper::Uri, peer: Option<std::net::IpAddr>) -> Reach {
        match peer {
            Some(ip) => Reach::of_addresses(&[ip]),
            None => Reach::of_addresses(&resolve(server).await.unwrap_or_default()),
        }
    }

    /// The reach of a server at `addresses`: public ones, and the kinds of the others when
    /// none is public. A name is its owner's to answer for: one that answers a public
    /// address and a loopback one is a public server whose DNS names the client's machine.
    pub(crate) fn of_addresses(addresses: &[std::net::IpAddr]) -> Reach {
        let mut kinds = vec![AddressKind::Public];
        let kinds_of = addresses.iter().map(|ip| AddressKind::of(*ip));
        if kinds_of.clone().any(|kind| kind == AddressKind::Public) {
            return Reach { kinds };
        }
        for kind in kinds_of {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        Reach { kinds }
    }

    pub(crate) fn allows(&self, ip: std::net::IpAddr) -> bool {
        self.kinds.contains(&AddressKind::of(ip))
    }

    /// `url` as a URI a supplied URL may be: `https`, or `http` to a loopback host where
    /// loopback is within reach; a host given as an address must be within reach.
    pub(crate) fn checked(&self, url: &str) -> Result<hyper::Uri, String> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| format!("`{url}` is not a URL: {e}"))?;
        if uri.host().is_none() {
            return Err(format!("`{url}` names no host"));
        }
        let host = host_of(&uri);
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if is_loopback(host) && self.kinds.contains(&AddressKind::Loopback) => {}
            _ => {
                return Err(format!(
                    "`{url}` is not an https URL: the authorization server is reached over HTTPS (plain HTTP only on a loopback address, for a server on loopback)"
                ));
            }
        }
        if let Ok(ip) = host.parse::<std::net::IpAddr>()
            && !self.allows(ip)
        {
            return Err(self.refusal(url, ip));
        }
        Ok(uri)
    }

    /// Resolves `uri`'s host and refuses it when any of its addresses is out of reach.
    pub(crate) async fn resolved(&self, uri: &hyper::Uri) -> Result<(), String> {
        let addresses = resolve(uri).await?;
        match addresses.into_iter().find(|ip| !self.allows(*ip)) {
            Some(ip) => Err(self.refusal(&uri.to_string(), ip)),
            None => Ok(()),
        }
    }

    pub(crate) fn refusal(&self, url: &str, ip: std::net::IpAddr) -> String {
        format!(
            "`{url}` leads to {ip}, a {:?} address, which a URL the server supplies may not reach (the server is not at one)",
            AddressKind::of(ip)
        )
    }
}

/// The addresses `uri`'s host resolves to (the host itself, when it is an address).
#[cfg(feature = "client")]
async fn resolve(uri: &hyper::Uri) -> Result<Vec<std::net::IpAddr>, String> {
    let host = host_of(uri);
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![ip]);
    }
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    tokio::net::lookup_host((host, port))
        .await
        .map(|addresses| addresses.map(|a| a.ip()).collect())
        .map_err(|e| format!("{host} could not be resolved: {e}"))
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
    /// The address the connection went to, where the connector tells it.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub remote: Option<std::net::SocketAddr>,
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
            .map_err(|e| format!("{url}: {}", with_causes(&e)))?;
        let (parts, body) = response.into_parts();
        let remote = parts
            .extensions
            .get::<hyper_util::client::legacy::connect::HttpInfo>()
            .map(|info| info.remote_addr());
        let body = http_body_util::Limited::new(body, cap)
            .collect()
            .await
            .map_err(|e| format!("{url}: reading the answer: {e}"))?
            .to_bytes();
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
            remote,
        })
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .map_err(|_| format!("{url} did not answer within {} s", deadline.as_secs()))?
}

/// An error and what caused it, down the chain: a client's "client error (Connect)" says
/// why only in its causes.
#[cfg(any(feature = "oauth", feature = "client"))]
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(one) = cause {
        text.push_str(": ");
        text.push_str(&one.to_string());
        cause = one.source();
    }
    text
}

#[cfg(all(test, any(feature = "oauth", feature = "client")))]
mod tests {
    use super::*;

    /// Answers one request on `listener` with an empty 200.
    #[cfg(feature = "client")]
    async fn answer_once(listener: tokio::net::TcpListener) {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = [0u8; 1024];
        let _ = socket.read(&mut head).await;
        let _ = socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
    }

    #[cfg(feature = "client")]
    async fn get(client: &Client, url: &str) -> Result<Answer, String> {
        let request = hyper::Request::get(url)
            .body(Full::new(Bytes::new()))
            .unwrap();
        exchange(
            client,
            url,
            request,
            std::time::Duration::from_secs(10),
            1024,
        )
        .await
    }

    #[cfg(feature = "client")]
    #[tokio::test]
    async fn a_servers_reach_is_that_of_the_address_it_was_reached_at() {
        let loopback: std::net::IpAddr = "127.0.0.1".parse().unwrap();
        let public: std::net::IpAddr = "192.0.2.10".parse().unwrap();
        let private: std::net::IpAddr = "10.0.0.5".parse().unwrap();
        let server: hyper::Uri = "http://localhost/mcp".parse().unwrap();
        // `localhost` resolves to loopback, but the connection went to a public address:
        // the server's DNS cannot answer loopback to a second look.
        let reached = Reach::of_server(&server, Some(public)).await;
        assert!(!reached.allows(loopback));
        let on_loopback = Reach::of_server(&server, Some(loopback)).await;
        assert!(on_loopback.allows(loopback));
        // A name that answers a public address among others is a public server.
        assert!(!Reach::of_addresses(&[public, loopback]).allows(loopback));
        assert!(!Reach::of_addresses(&[loopback, public, private]).allows(private));
        assert!(Reach::of_addresses(&[private, loopback]).allows(private));
        assert!(Reach::of_addresses(&[private, loopback]).allows(public));
    }

    #[cfg(feature = "client")]
    #[tokio::test]
    async fn a_client_within_a_reach_connects_to_no_name_that_leads_out_of_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://localhost:{}/",
            listener.local_addr().unwrap().port()
        );
        let answering = tokio::spawn(answer_once(listener));
        // A server on a public address: `localhost`, resolved when connecting, is out of
        // its reach, whatever a look at the name before said.
        let public = Reach {
            kinds: vec![AddressKind::Public],
        };
        let refused = get(&client_within(&public).unwrap(), &url)
            .await
            .map(|answer| answer.status)
            .unwrap_err();
        assert!(refused.contains("Loopback address"), "{refused}");
        // The same name within a server on loopback's reach is connected to and answered.
        let answered = get(&client_within(&Reach::loopback()).unwrap(), &url)
            .await
            .unwrap();
        assert_eq!(answered.status, hyper::StatusCode::OK);
        answering.await.unwrap();
    }

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

    #[cfg(feature = "client")]
    #[test]
    fn addresses_are_told_apart_by_kind() {
        use AddressKind::*;
        for (ip, kind) in [
            ("93.184.216.34", Public),
            ("192.0.2.2", Public),
            ("127.0.0.1", Loopback),
            ("127.8.9.10", Loopback),
            ("::1", Loopback),
            ("::ffff:127.0.0.1", Loopback),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("172.32.0.1", Public),
            ("192.168.1.1", Private),
            ("100.100.100.200", Private),
            ("fd00:ec2::254", Private),
            ("::ffff:10.0.0.1", Private),
            ("169.254.169.254", LinkLocal),
            ("fe80::1", LinkLocal),
            ("0.0.0.0", Unspecified),
            ("::", Unspecified),
            ("2001:db8::1", Public),
        ] {
            assert_eq!(AddressKind::of(ip.parse().unwrap()), kind, "{ip}");
        }
    }

    #[cfg(feature = "client")]
    #[tokio::test]
    async fn a_server_reaches_only_public_addresses_and_its_own_kind() {
        let public = Reach::of_server(&"https://192.0.2.10/mcp".parse().unwrap(), None).await;
        let loopback = Reach::of_server(&"http://127.0.0.1:8080/mcp".parse().unwrap(), None).await;
        let private = Reach::of_server(&"http://10.0.0.5/mcp".parse().unwrap(), None).await;
        let link_local = Reach::of_server(&"http://169.254.1.1/mcp".parse().unwrap(), None).await;
        for url in [
            "http://127.0.0.1:8081/.well-known/oauth-protected-resource",
            "http://localhost:8081/x",
            "https://127.0.0.1/x",
            "https://10.0.0.1/x",
            "https://169.254.169.254/latest/meta-data/",
            "https://[fe80::1]/x",
            "https://0.0.0.0/x",
        ] {
            assert!(public.checked(url).is_err(), "{url}");
        }
        assert!(public.checked("https://auth.example.com/token").is_ok());
        assert!(public.checked("http://auth.example.com/token").is_err());
        assert!(loopback.checked("http://127.0.0.1:8081/token").is_ok());
        assert!(loopback.checked("http://localhost:8081/token").is_ok());
        assert!(loopback.checked("https://10.0.0.1/token").is_err());
        assert!(loopback.checked("https://169.254.169.254/").is_err());
        assert!(private.checked("https://10.0.0.1/token").is_ok());
        assert!(private.checked("https://192.168.0.1/token").is_ok());
        assert!(private.checked("http://127.0.0.1/token").is_err());
        assert!(private.checked("https://169.254.169.254/").is_err());
        assert!(link_local.checked("https://169.254.169.254/").is_ok());
        assert!(public.checked("javascript:alert(1)").is_err());
        assert!(public.checked("file:///etc/passwd").is_err());
    }

    #[cfg(feature = "client")]
    #[tokio::test]
    async fn a_name_is_judged_by_the_addresses_it_resolves_to() {
        let public = Reach::of_server(&"https://192.0.2.10/mcp".parse().unwrap(), None).await;
        let name: hyper::Uri = "https://localhost:8443/token".parse().unwrap();
        assert!(public.checked("https://localhost:8443/token").is_ok());
        let refused = public.resolved(&name).await.unwrap_err();
        assert!(refused.contains("Loopback"), "{refused}");
        let on_loopback =
            Reach::of_server(&"http://localhost:8080/mcp".parse().unwrap(), None).await;
        assert!(on_loopback.resolved(&name).await.is_ok());
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
