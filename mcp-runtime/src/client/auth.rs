//! How an HTTP request is authorised: a fixed bearer token, or OAuth (see
//! [`OAuth`](super::oauth::OAuth)), which answers a 401 or an `insufficient_scope` 403 by
//! getting a (better) token and having the request sent again.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hyper::Uri;

use super::CallError;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

tokio::task_local! {
    /// The clock of the request being sent, for the steps of a sign-in that wait on a
    /// person (see [`PersonStep`]); none over a wire that never signs in.
    pub(crate) static SIGN_IN_CLOCK: Option<Arc<SignInClock>>;
}

/// How long a request's sign-ins waited on a person. A request's timeout does not count that
/// time: a person signing in has the sign-in's own deadline (five minutes), whatever the
/// timeout of the request that met the server's refusal.
#[derive(Default)]
pub(crate) struct SignInClock(Mutex<(Duration, Option<Instant>)>);

impl SignInClock {
    /// The time taken by the person steps so far (the one under way included), and whether
    /// one is under way.
    pub(crate) fn taken(&self) -> (Duration, bool) {
        let (done, began) = *self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match began {
            Some(began) => (done + began.elapsed(), true),
            None => (done, false),
        }
    }
}

/// A step of a sign-in that waits on a person (the user agent's), timed on the clock of the
/// request being sent, if any, from when it is made to when it is dropped.
pub(crate) struct PersonStep(Option<Arc<SignInClock>>);

impl PersonStep {
    pub(crate) fn begin() -> PersonStep {
        let clock = SIGN_IN_CLOCK.try_with(Option::clone).ok().flatten();
        if let Some(clock) = &clock {
            clock.0.lock().unwrap_or_else(PoisonError::into_inner).1 = Some(Instant::now());
        }
        PersonStep(clock)
    }
}

impl Drop for PersonStep {
    fn drop(&mut self) {
        if let Some(clock) = &self.0 {
            let mut times = clock.0.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(began) = times.1.take() {
                times.0 += began.elapsed();
            }
        }
    }
}

/// A server's refusal of a request for want of authorisation.
pub(crate) struct Refusal<'a> {
    /// 401 or 403.
    pub status: u16,
    /// Its `WWW-Authenticate` headers, joined.
    pub challenge: &'a str,
    /// Its `DPoP-Nonce` header (RFC 9449), if any.
    pub dpop_nonce: Option<&'a str>,
    /// The address the refused request went to, where the connection tells it: the
    /// server's own, which the server's DNS cannot answer otherwise afterwards.
    pub peer: Option<std::net::IpAddr>,
    /// The `Authorization` the refused request carried, if any: a token renewed since (by
    /// another request) is tried before anything else is.
    pub authorization: Option<&'a str>,
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
