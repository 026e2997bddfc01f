//! [`Introspection`]: opaque access tokens, asked about at the authorization server (RFC
//! 7662), the answers kept in a bounded cache.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::fetch::Fetcher;
use super::{auth_info, discovery, unavailable};
use crate::auth::AuthInfo;
use crate::http::{AuthRejection, TokenVerifier};

/// Verifies bearer tokens by asking the authorization server's introspection endpoint
/// (RFC 7662) whether each is active, for tokens that are not JWTs or when a revoked token
/// must stop working at once.
///
/// A token is accepted when the answer says `"active": true`, its `aud` names this server's
/// canonical URI (RFC 8707: a token for another resource is refused), and its `iss` (if
/// given) is the issuer and its `exp` (if given) has not passed. The server authenticates
/// to the endpoint as an OAuth client ([`client`](Self::client), HTTP Basic).
///
/// An accepted answer is kept for [`cache_for`](Self::cache_for) (a minute by default, never
/// past the token's `exp`), under the SHA-256 of the token rather than the token itself, in
/// a cache of at most [`cache_capacity`](Self::cache_capacity) entries; refusals are not
/// kept. The endpoint is found in the issuer's metadata unless
/// [`endpoint`](Self::endpoint) names it.
///
/// ```
/// use mcp_runtime::http::HttpOptions;
/// use mcp_runtime::oauth::Introspection;
///
/// let issuer = "https://login.example.com";
/// let verifier = Introspection::new(issuer, "https://mcp.example.com/mcp")
///     .client("mcp-server", std::env::var("INTROSPECTION_SECRET").unwrap_or_default());
/// let options = HttpOptions::default()
///     .auth(verifier)
///     .authorization_servers([issuer])
///     .resource_base_url("https://mcp.example.com");
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct Introspection {
    issuer: String,
    audience: Vec<String>,
    endpoint: Option<String>,
    client: Option<(String, String)>,
    audience_optional: bool,
    cache_for: Duration,
    capacity: usize,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client secret is never printed.
        f.debug_struct("Introspection")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("endpoint", &self.endpoint)
            .field("client", &self.client.as_ref().map(|(id, _)| id))
            .finish_non_exhaustive()
    }
}

struct Shared {
    fetcher: OnceLock<Fetcher>,
    /// The endpoint found, or why not and when (a failure is not tried again for a while).
    /// Held by the discovery's own task while it runs: see [`Introspection::find_endpoint`].
    endpoint: Arc<tokio::sync::Mutex<Option<Discovered>>>,
    cache: Mutex<HashMap<[u8; 32], (Instant, AuthInfo)>>,
    /// The questions in flight, by the token's digest.
    inflight: Questions,
    /// Bounds the questions in flight at once: a flood of made-up tokens costs the
    /// authorization server this many concurrent requests, no more.
    asking: tokio::sync::Semaphore,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            fetcher: OnceLock::new(),
            endpoint: Arc::default(),
            cache: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            asking: tokio::sync::Semaphore::new(MAX_ASKING),
        }
    }
}

/// The introspection endpoint found in the metadata, or why none was, and when.
type Discovered = (Result<String, String>, Instant);

/// One question about a token, its answer shared by every request that waits for it.
type Asked = tokio::sync::OnceCell<Result<AuthInfo, AuthRejection>>;

/// The questions in flight, by the token's digest.
type Questions = Mutex<HashMap<[u8; 32], Arc<Asked>>>;

/// The most introspection requests in flight at once.
const MAX_ASKING: usize = 32;
/// How long a request waits for its turn to ask before it is answered 503.
const ASKING_WAIT: Duration = Duration::from_secs(5);
/// How long a failed discovery of the endpoint is remembered before it is tried again.
const DISCOVERY_BACKOFF: Duration = Duration::from_secs(5);

impl Introspection {
    /// Asks `issuer`'s introspection endpoint about tokens, accepting those for `audience`,
    /// this server's canonical URI.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Introspection {
            issuer: issuer.into(),
            audience: vec![audience.into()],
            endpoint: None,
            client: None,
            audience_optional: false,
            cache_for: Duration::from_secs(60),
            capacity: 10_000,
            shared: Arc::default(),
        }
    }

    /// The introspection endpoint's URL, instead of the one the issuer's metadata names.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// The client id and secret this server authenticates with at the endpoint.
    pub fn client(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.client = Some((id.into(), secret.into()));
        self
    }

    /// Accepts a further audience as well.
    pub fn also_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience.push(audience.into());
        self
    }

    /// Accepts answers that name no audience at all (some authorization servers leave `aud`
    /// out of introspection answers). An answer naming another audience is still refused.
    pub fn audience_optional(mut self) -> Self {
        self.audience_optional = true;
        self
    }

    /// How long an accepted answer is used before the endpoint is asked again (a minute by
    /// default; zero asks about every request). A revoked token works for at most this long.
    pub fn cache_for(mut self, time: Duration) -> Self {
        self.cache_for = time;
        self
    }

    /// The most answers kept (10,000 by default).
    pub fn cache_capacity(mut self, entries: usize) -> Self {
        self.capacity = entries;
        self
    }

    async fn check(&self, token: &str) -> Result<AuthInfo, AuthRejection> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(info) = self.cached(&digest) {
            return Ok(info);
        }
        // Requests presenting the same token at once share one question (a client opening
        // several streams with a fresh token asks the authorization server once).
        let waiting = Waiting::join(&self.shared.inflight, digest);
        waiting
            .asked()
            .get_or_init(|| self.ask(token, digest))
            .await
            .clone()
    }

    /// Asks the authorization server about a token, and keeps an accepting answer.
    async fn ask(&self, token: &str, digest: [u8; 32]) -> Result<AuthInfo, AuthRejection> {
        let fetcher = self.shared.fetcher.get_or_init(Fetcher::new);
        let endpoint = self.find_endpoint(fetcher).await?;
        let _turn = tokio::time::timeout(ASKING_WAIT, self.shared.asking.acquire())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or_else(|| {
                unavailable("too many tokens are being checked at once: retry shortly")
            })?;
        let client = self
            .client
            .as_ref()
            .map(|(id, secret)| (id.as_str(), secret.as_str()));
        let answer = fetcher
            .post_form(
                &endpoint,
                &[("token", token), ("token_type_hint", "access_token")],
                client,
            )
            .await
            .map_err(|failure| self.failed(&failure))?;
        let Value::Object(answer) = answer else {
            return Err(self.failed("the introspection answer is not a JSON object"));
        };
        let expires = self.judge(&answer)?;
        let info = auth_info(answer)?;
        self.keep(digest, info.clone(), expires);
        Ok(info)
    }

    /// The introspection endpoint: named, or found in the issuer's metadata (once; a failure
    /// is remembered for a few seconds, so requests do not each try again).
    async fn find_endpoint(&self, fetcher: &Fetcher) -> Result<String, AuthRejection> {
        if let Some(url) = &self.endpoint {
            return Ok(url.clone());
        }
        let mut found = Arc::clone(&self.shared.endpoint).lock_owned().await;
        if let Some((outcome, at)) = &*found
            && (outcome.is_ok() || at.elapsed() < DISCOVERY_BACKOFF)
        {
            return outcome.clone().map_err(|failure| self.failed(&failure));
        }
        // The discovery is a task of its own, holding the lock until its outcome is recorded:
        // a request that stops waiting (its client hung up) does not cancel it, so the
        // requests queued behind it use its outcome instead of each discovering anew.
        let fetcher = fetcher.clone();
        let issuer = self.issuer.clone();
        let discovery = tokio::spawn(async move {
            let discovered = discovery::discover(&fetcher, &issuer)
                .await
                .and_then(|metadata| {
                    metadata.introspection_endpoint.ok_or_else(|| {
                        format!("the metadata of `{issuer}` names no introspection_endpoint")
                    })
                });
            *found = Some((discovered.clone(), Instant::now()));
            discovered
        });
        let discovered = discovery
            .await
            .unwrap_or_else(|failure| Err(format!("the discovery failed: {failure}")));
        discovered.map_err(|failure| self.failed(&failure))
    }

    fn failed(&self, failure: &str) -> AuthRejection {
        tracing::warn!(issuer = %self.issuer, "token introspection failed: {failure}");
        unavailable("the authorization server could not be asked about the token")
    }

    /// Refuses an answer that does not make the token good here; else how long (in seconds
    /// from now) it stays good, if the answer says.
    fn judge(&self, answer: &Map<String, Value>) -> Result<Option<u64>, AuthRejection> {
        let invalid = |why: &str| Err(AuthRejection::InvalidToken(why.to_owned()));
        if answer.get("active") != Some(&Value::Bool(true)) {
            return invalid("the token is not active");
        }
        if let Some(issuer) = answer.get("iss")
            && issuer.as_str() != Some(self.issuer.as_str())
        {
            return invalid("the token was issued by another issuer (iss)");
        }
        let audiences: Vec<&str> = match answer.get("aud") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            None | Some(Value::Null) => Vec::new(),
            // A number or an object is no audience, and not the absence of one either.
            Some(_) => return invalid("the token's audience (aud) is malformed"),
        };
        let ours = audiences
            .iter()
            .any(|a| self.audience.iter().any(|o| o == a));
        let excused = audiences.is_empty() && self.audience_optional;
        if !(ours || excused) {
            return invalid(
                "the token is for another resource: its audience (aud) is not this server",
            );
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        // `exp` is a NumericDate: seconds, possibly with a fraction.
        match answer.get("exp").and_then(Value::as_f64) {
            Some(exp) if exp <= now as f64 => invalid("the token has expired"),
            Some(exp) => Ok(Some(exp as u64 - now)),
            None => Ok(None),
        }
    }

    fn cached(&self, digest: &[u8; 32]) -> Option<AuthInfo> {
        let cache = self.shared.cache.lock().unwrap_or_else(|p| p.into_inner());
        let (until, info) = cache.get(digest)?;
        (Instant::now() < *until).then(|| info.clone())
    }

    fn keep(&self, digest: [u8; 32], info: AuthInfo, expires_in: Option<u64>) {
        let mut time = self.cache_for;
        if let Some(seconds) = expires_in {
            time = time.min(Duration::from_secs(seconds));
        }
        if time.is_zero() || self.capacity == 0 {
            return;
        }
        let now = Instant::now();
        let mut cache = self.shared.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= self.capacity && !cache.contains_key(&digest) {
            cache.retain(|_, (until, _)| *until > now);
            // Still full: the answer closest to its end makes room.
            if cache.len() >= self.capacity
                && let Some(first) = cache
                    .iter()
                    .min_by_key(|(_, (until, _))| *until)
                    .map(|(key, _)| *key)
            {
                cache.remove(&first);
            }
        }
        cache.insert(digest, (now + time, info));
    }
}

/// A request's share in the question about its token, from the map of those in flight. The
/// question leaves the map once answered (a later request asks anew), or when the last
/// request waiting for it gives up on it (its client hung up): made-up tokens presented and
/// given up on leave nothing behind.
struct Waiting<'a> {
    inflight: &'a Questions,
    digest: [u8; 32],
    asked: Option<Arc<Asked>>,
}

impl<'a> Waiting<'a> {
    fn join(inflight: &'a Questions, digest: [u8; 32]) -> Self {
        let asked = Arc::clone(
            inflight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(digest)
                .or_default(),
        );
        Waiting {
            inflight,
            digest,
            asked: Some(asked),
        }
    }

    fn asked(&self) -> &Asked {
        self.asked.as_deref().expect("held until dropped")
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        let Some(asked) = self.asked.take() else {
            return;
        };
        // Shares are taken and given back only while the map is locked, so the count is
        // exact: two (the map's and this one) means no other request waits.
        let last = Arc::strong_count(&asked) == 2;
        if (asked.initialized() || last)
            && inflight
                .get(&self.digest)
                .is_some_and(|cell| Arc::ptr_eq(cell, &asked))
        {
            inflight.remove(&self.digest);
        }
        drop(asked);
    }
}

impl TokenVerifier for Introspection {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<AuthInfo, AuthRejection>> + Send + 'a>> {
        Box::pin(self.check(token))
    }
}

#[cfg(test)]
mod tests {
    use super::super::stub_provider::StubProvider;
    use super::*;

    fn verifier() -> Introspection {
        Introspection::new("https://as.example", "https://mcp.example/mcp")
    }

    fn answer(value: Value) -> Map<String, Value> {
        let Value::Object(map) = value else {
            unreachable!()
        };
        map
    }

    #[test]
    fn answers_are_judged_for_activity_issuer_audience_and_expiry() {
        let v = verifier();
        let good = answer(serde_json::json!({
            "active": true, "iss": "https://as.example", "aud": ["x", "https://mcp.example/mcp"]
        }));
        assert_eq!(v.judge(&good), Ok(None));
        for (bad, why) in [
            (serde_json::json!({"active": false}), "not active"),
            (
                serde_json::json!({"active": "true", "aud": "https://mcp.example/mcp"}),
                "not active",
            ),
            (
                serde_json::json!({"active": true, "aud": "https://other.example"}),
                "another resource",
            ),
            (serde_json::json!({"active": true}), "another resource"),
            (
                serde_json::json!({"active": true, "aud": "https://mcp.example/mcp", "iss": "https://evil"}),
                "another issuer",
            ),
            (
                serde_json::json!({"active": true, "aud": "https://mcp.example/mcp", "exp": 1}),
                "expired",
            ),
        ] {
            match v.judge(&answer(bad)) {
                Err(AuthRejection::InvalidToken(text)) => assert!(text.contains(why), "{text}"),
                other => panic!("{other:?}"),
            }
        }
        let lax = verifier().audience_optional();
        assert!(
            lax.judge(&answer(serde_json::json!({"active": true})))
                .is_ok()
        );
        assert!(
            lax.judge(&answer(
                serde_json::json!({"active": true, "aud": "https://other"})
            ))
            .is_err()
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn requests_with_the_same_token_share_one_question() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&asked);
        let endpoint = axum::Router::new().route(
            "/introspect",
            axum::routing::post(move || {
                let counter = Arc::clone(&counter);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let answer = serde_json::json!({
                        "active": true, "sub": "ada", "aud": "https://mcp.example/mcp"
                    });
                    (
                        [(axum::http::header::CONTENT_TYPE, "application/json")],
                        answer.to_string(),
                    )
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, endpoint).await });
        // Nothing kept: only the sharing of one question in flight can save a request.
        let v = verifier()
            .endpoint(format!("http://{addr}/introspect"))
            .cache_for(Duration::ZERO);
        // On one thread, all four are waiting before the endpoint is reached at all.
        let all = tokio::join!(v.check("t"), v.check("t"), v.check("t"), v.check("t"));
        for answer in [all.0, all.1, all.2, all.3] {
            assert_eq!(answer.unwrap().subject, "ada");
        }
        assert_eq!(
            asked.load(Ordering::SeqCst),
            1,
            "one question for four requests"
        );
        assert!(v.shared.inflight.lock().unwrap().is_empty());
        v.check("t").await.unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 2, "a later request asks anew");
    }

    #[tokio::test]
    async fn a_question_leaves_the_map_when_no_request_waits_for_it() {
        let provider = StubProvider::start(|_, path| {
            (path == "/introspect").then(|| serde_json::json!({"active": false}).to_string())
        })
        .await;
        let v = verifier().endpoint(format!("{}/introspect", provider.url));
        let inflight = || v.shared.inflight.lock().unwrap().len();
        // The only request hangs up while the question is asked.
        tokio::select! {
            answer = v.check("made-up") => panic!("answered while the endpoint holds it: {answer:?}"),
            () = provider.received("/introspect", 1) => {}
        }
        assert_eq!(inflight(), 0, "nobody waits for the question");

        // Of two requests sharing a question, the one asking hangs up: the other still waits
        // for it, so it stays, and asks in turn.
        let mut asking = Box::pin(v.check("shared"));
        let mut waiting = Box::pin(v.check("shared"));
        tokio::select! {
            answer = &mut asking => panic!("answered while the endpoint holds it: {answer:?}"),
            () = provider.received("/introspect", 2) => {}
        }
        tokio::select! {
            biased;
            answer = &mut waiting => panic!("answered while the endpoint holds it: {answer:?}"),
            () = std::future::ready(()) => {}
        }
        drop(asking);
        assert_eq!(inflight(), 1, "a request still waits");
        provider.open();
        assert!(matches!(waiting.await, Err(AuthRejection::InvalidToken(_))));
        assert_eq!(provider.count("/introspect"), 3);
        assert_eq!(inflight(), 0);
    }

    #[tokio::test]
    async fn a_discovery_given_up_on_is_finished_for_the_requests_behind_it() {
        const METADATA: &str = "/.well-known/oauth-authorization-server";
        let provider = StubProvider::start(|base, path| match path {
            METADATA => Some(
                serde_json::json!({
                    "issuer": base, "introspection_endpoint": format!("{base}/introspect")
                })
                .to_string(),
            ),
            "/introspect" => Some(serde_json::json!({"active": false}).to_string()),
            _ => None,
        })
        .await;
        let v = Introspection::new(&provider.url, "https://mcp.example/mcp");
        tokio::select! {
            answer = v.check("made-up") => panic!("answered without the metadata: {answer:?}"),
            () = provider.received(METADATA, 1) => {}
        }
        provider.open();
        let answer = v.check("made-up").await;
        assert!(
            matches!(answer, Err(AuthRejection::InvalidToken(_))),
            "{answer:?}"
        );
        assert_eq!(
            provider.count(METADATA),
            1,
            "one discovery for both requests"
        );
    }

    #[test]
    fn the_cache_is_bounded_and_forgets_at_expiry() {
        let v = verifier().cache_capacity(2);
        for n in 0..5u8 {
            v.keep([n; 32], AuthInfo::new(format!("u{n}")), None);
        }
        assert_eq!(v.shared.cache.lock().unwrap().len(), 2);
        assert_eq!(v.cached(&[4; 32]).unwrap().subject, "u4");
        v.keep([9; 32], AuthInfo::new("gone"), Some(0));
        assert!(v.cached(&[9; 32]).is_none());
    }
}
