//! How an HTTP request is authorised: a fixed bearer token, or OAuth (see
//! [`OAuth`](super::oauth::OAuth)), which answers a 401 or an `insufficient_scope` 403 by
//! getting a (better) token and having the request sent again.

use std::future::Future;
use std::pin::Pin;

use hyper::Uri;

use super::CallError;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A server's refusal of a request for want of authorisation.
pub(crate) struct Refusal<'a> {
    /// 401 or 403.
    pub status: u16,
    /// Its `WWW-Authenticate` headers, joined.
    pub challenge: &'a str,
    /// Its `DPoP-Nonce` header (RFC 9449), if any.
    pub dpop_nonce: Option<&'a str>,
}

pub(crate) trait Authorize: Send + Sync + 'static {
    /// The headers that authorise a request of `method` to `url` (`Authorization`, and a
    /// proof of possession where the token is bound to a key).
    fn headers<'a>(
        &'a self,
        method: &'a str,
        url: &'a Uri,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, CallError>>;

    /// The server at `server` refused a request (`refusal`) for the `attempt`-th time (from
    /// 0): whether the request should be sent again, now that the authorisation was renewed.
    fn challenged<'a>(
        &'a self,
        refusal: Refusal<'a>,
        server: &'a Uri,
        attempt: usize,
    ) -> BoxFuture<'a, Result<bool, CallError>>;
}

/// A token given once, sent as `Authorization: Bearer …`.
pub(crate) struct Bearer(pub String);

impl Authorize for Bearer {
    fn headers<'a>(
        &'a self,
        _method: &'a str,
        _url: &'a Uri,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, CallError>> {
        Box::pin(async move { Ok(vec![("Authorization".into(), format!("Bearer {}", self.0))]) })
    }

    fn challenged<'a>(
        &'a self,
        _refusal: Refusal<'a>,
        _server: &'a Uri,
        _attempt: usize,
    ) -> BoxFuture<'a, Result<bool, CallError>> {
        Box::pin(async { Ok(false) })
    }
}
