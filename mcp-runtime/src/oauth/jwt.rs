//! [`JwtVerifier`]: access tokens that are JWTs signed by the authorization server, checked
//! against the keys it publishes.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};

use super::discovery;
use super::fetch::Fetcher;
use super::{auth_info, unavailable};
use crate::auth::AuthInfo;
use crate::http::{AuthRejection, TokenVerifier};

/// The signature algorithms accepted unless [`JwtVerifier::algorithms`] says otherwise: every
/// asymmetric one. HMAC (`HS256`…) is never accepted: its key is a shared secret, and a
/// verifier that took one could be fed the authorization server's *public* key as the secret.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies bearer tokens that are JWTs issued by an OAuth 2.1 authorization server (RFC 9068
/// access tokens, or any JWT the server signs with a published key): the server is then an
/// OAuth resource server, as the MCP authorization specification describes.
///
/// A token is accepted when all of these hold:
/// - its signature verifies with a key of the issuer's JWKS, found by its `kid`, with an
///   algorithm of the allowlist (asymmetric only: never `none`, never HMAC);
/// - `iss` is the issuer, exactly;
/// - `aud` names this server's canonical URI (RFC 8707 resource indicators): a token the
///   authorization server minted for another resource is refused, so a token given to some
///   other service cannot be replayed here;
/// - `exp` is in the future and `nbf` (if any) in the past, give or take the leeway
///   (60 s unless [`leeway`](Self::leeway) says otherwise).
///
/// The keys are found through the issuer's metadata (RFC 8414, then OpenID Connect
/// Discovery), fetched on the first token, kept, fetched again after
/// [`max_key_age`](Self::max_key_age), and at once when a token names a key the set does not
/// hold (a rotation), at most once every [`min_refresh`](Self::min_refresh): a flood of
/// tokens with made-up key ids costs the authorization server one request a period. The
/// authorization server is reached over HTTPS (plain HTTP only on a loopback address).
///
/// The caller it establishes ([`AuthInfo`]): `sub` as the subject (a token without one, for
/// a client acting for itself, is `client:<client_id>`; one naming neither is refused), the
/// scopes of `scope` (space-separated) or `scp`, `client_id` (or `azp`) as the client, and
/// every claim.
///
/// ```
/// use mcp_runtime::http::HttpOptions;
/// use mcp_runtime::oauth::JwtVerifier;
///
/// let issuer = "https://login.example.com/";
/// let this_server = "https://mcp.example.com/mcp";
/// let options = HttpOptions::default()
///     .auth(JwtVerifier::new(issuer, this_server))
///     // What the protected-resource metadata tells clients (RFC 9728).
///     .authorization_servers([issuer])
///     .resource_base_url("https://mcp.example.com");
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct JwtVerifier {
    issuer: String,
    audience: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    jwks_uri: Option<String>,
    min_refresh: Duration,
    max_key_age: Duration,
    access_token_type_only: bool,
    /// The claims' checks for each allowed algorithm (the library takes one family per
    /// check), made from the settings above whenever one changes.
    validations: Vec<(Algorithm, Validation)>,
    keys: Arc<KeyCache>,
}

/// The longest one fetch of the key set may take, discovery included.
const FETCH_BUDGET: Duration = Duration::from_secs(10);

/// The key set a token is verified with.
enum Keys {
    /// Fetched within the key age, or just now.
    Current(Arc<KeySet>),
    /// The set held, which could not be fetched anew.
    Held(Arc<KeySet>),
}

impl Keys {
    fn set(self) -> Arc<KeySet> {
        match self {
            Keys::Current(keys) | Keys::Held(keys) => keys,
        }
    }
}

/// The keys fetched, shared by the verifier's clones.
#[derive(Debug, Default)]
struct KeyCache {
    current: RwLock<Option<Arc<KeySet>>>,
    /// Held while a fetch is under way, so concurrent requests wait for one fetch (or, with
    /// keys already held, use those meanwhile). The fetch's own task holds it, not the
    /// request that started it: see [`JwtVerifier::refresh`].
    fetching: Arc<tokio::sync::Mutex<Fetching>>,
}

#[derive(Debug, Default)]
struct Fetching {
    /// When the last fetch ended, in success or failure.
    last_attempt: Option<Instant>,
    jwks_uri: Option<String>,
    fetcher: Option<Fetcher>,
}

#[derive(Debug)]
struct KeySet {
    keys: Vec<Key>,
    fetched: Instant,
}

struct Key {
    kid: Option<String>,
    algorithm: Option<Algorithm>,
    key: DecodingKey,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Accepts tokens issued by `issuer` (its URL exactly as in the tokens' `iss`) for
    /// `audience`, this server's canonical URI (e.g. `https://mcp.example.com/mcp`).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        let verifier = JwtVerifier {
            issuer: issuer.into(),
            audience: vec![audience.into()],
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(60),
            jwks_uri: None,
            min_refresh: Duration::from_secs(30),
            max_key_age: Duration::from_secs(3600),
            access_token_type_only: false,
            validations: Vec::new(),
            keys: Arc::default(),
        };
        verifier.validated()
    }

    /// Makes the claims' checks anew from the settings: the issuer, the audiences, the
    /// algorithms, the leeway.
    fn validated(mut self) -> Self {
        self.validations = self
            .algorithms
            .iter()
            .map(|&algorithm| {
                let mut validation = Validation::new(algorithm);
                validation.set_issuer(&[&self.issuer]);
                validation.set_audience(&self.audience);
                validation.set_required_spec_claims(&["exp", "iss", "aud"]);
                validation.leeway = self.leeway.as_secs();
                validation.validate_nbf = true;
                (algorithm, validation)
            })
            .collect();
        self
    }

    /// Accepts a further audience as well (the server known by two URIs).
    pub fn also_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience.push(audience.into());
        self.validated()
    }

    /// The signature algorithms accepted, by their JOSE names (`"RS256"`, `"ES256"`,
    /// `"EdDSA"`…). By default every asymmetric algorithm.
    ///
    /// # Panics
    ///
    /// On a name that is not an asymmetric JOSE signature algorithm: `HS256`, `HS384` and
    /// `HS512` are refused (a verifier holding a shared secret could be fed the public key as
    /// one), `none` is no algorithm, and an empty list would accept nothing.
    pub fn algorithms(mut self, names: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        let mut algorithms = Vec::new();
        for name in names {
            let name = name.as_ref();
            match name.parse::<Algorithm>() {
                Ok(algorithm) if DEFAULT_ALGORITHMS.contains(&algorithm) => {
                    algorithms.push(algorithm);
                }
                _ => panic!(
                    "JwtVerifier::algorithms: `{name}` is not accepted; use asymmetric algorithms ({})",
                    DEFAULT_ALGORITHMS.map(|a| format!("{a:?}")).join(", ")
                ),
            }
        }
        assert!(
            !algorithms.is_empty(),
            "JwtVerifier::algorithms: the list is empty, so no token could be accepted"
        );
        self.algorithms = algorithms;
        self.validated()
    }

    /// The clock skew allowed on `exp` and `nbf` (60 s by default).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self.validated()
    }

    /// Takes the keys from this URL instead of the one the issuer's metadata names.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.jwks_uri = Some(url.into());
        self
    }

    /// The least time between two fetches of the key set caused by tokens naming keys it
    /// does not hold (30 s by default).
    pub fn min_refresh(mut self, every: Duration) -> Self {
        self.min_refresh = every;
        self
    }

    /// How long a fetched key set is used before it is fetched again (an hour by default),
    /// so a key the authorization server withdrew stops verifying within that time.
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// Accepts only tokens whose `typ` header says they are access tokens (`at+jwt`, RFC
    /// 9068 §4), so no other JWT the issuer signs for this audience passes for one. Off by
    /// default: many identity providers still type their access tokens `JWT`.
    pub fn access_token_type_only(mut self) -> Self {
        self.access_token_type_only = true;
        self
    }

    async fn check(&self, token: &str) -> Result<AuthInfo, AuthRejection> {
        let invalid = |why: &str| AuthRejection::InvalidToken(why.to_owned());
        let header = decode_header(token).map_err(|_| invalid("not a JWT"))?;
        if self.access_token_type_only
            && !header.typ.as_deref().is_some_and(|typ| {
                typ.eq_ignore_ascii_case("at+jwt") || typ.eq_ignore_ascii_case("application/at+jwt")
            })
        {
            return Err(invalid("not an access token (its typ is not at+jwt)"));
        }
        let Some((_, validation)) = self.validations.iter().find(|(a, _)| *a == header.alg) else {
            return Err(invalid(&format!(
                "tokens signed with {:?} are not accepted",
                header.alg
            )));
        };
        let mut keys = self.keys(None).await?.set();
        let mut matching = keys.matching(header.kid.as_deref(), header.alg);
        if matching.is_empty()
            && let Some(kid) = header.kid.as_deref()
            && keys.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
        {
            // The key is held, for another algorithm: fetching the set again cannot help.
            return Err(invalid("the token's algorithm does not fit its key"));
        }
        if matching.is_empty() {
            // A key this set does not hold: the authorization server may have rotated.
            match self.keys(Some(&keys)).await? {
                Keys::Current(fresh) => keys = fresh,
                // The set could not be fetched again yet: the token may be good, so it is
                // not refused as bad.
                Keys::Held(_) => {
                    return Err(unavailable(
                        "the token's key is not among those fetched, which cannot be fetched again yet",
                    ));
                }
            }
            matching = keys.matching(header.kid.as_deref(), header.alg);
        }
        if matching.is_empty() {
            return Err(invalid(
                "signed with a key the authorization server does not publish",
            ));
        }
        let mut refusal = invalid("bad signature");
        for key in matching {
            match decode::<Map<String, Value>>(token, &key.key, validation) {
                Ok(data) => return auth_info(data.claims),
                Err(e) => refusal = rejection(e.kind()),
            }
        }
        Err(refusal)
    }

    /// The key set to verify with. With `stale` (a set that lacked the token's key), a newer
    /// one if the refresh period allows a fetch; `Held` when no fetch was allowed, or none
    /// succeeded, and the set already held is all there is.
    async fn keys(&self, stale: Option<&Arc<KeySet>>) -> Result<Keys, AuthRejection> {
        let current = self.current();
        if stale.is_none()
            && let Some(keys) = &current
        {
            if keys.fetched.elapsed() < self.max_key_age {
                return Ok(Keys::Current(Arc::clone(keys)));
            }
            // Old keys: one request fetches anew, the others verify with the old ones
            // meanwhile rather than wait for it.
            return match Arc::clone(&self.keys.fetching).try_lock_owned() {
                Ok(fetching) => self.refresh(fetching, current, None).await,
                Err(_) => Ok(Keys::Held(Arc::clone(keys))),
            };
        }
        let fetching = Arc::clone(&self.keys.fetching).lock_owned().await;
        self.refresh(fetching, current, stale).await
    }

    /// Fetches the key set, unless another request did while this one waited, or the last
    /// attempt ended less than the refresh period ago.
    async fn refresh(
        &self,
        fetching: tokio::sync::OwnedMutexGuard<Fetching>,
        current: Option<Arc<KeySet>>,
        stale: Option<&Arc<KeySet>>,
    ) -> Result<Keys, AuthRejection> {
        if let Some(keys) = self.current()
            && stale.is_none_or(|stale| !Arc::ptr_eq(stale, &keys))
            && keys.fetched.elapsed() < self.max_key_age
        {
            return Ok(Keys::Current(keys));
        }
        // With no keys at all every token is refused, so a failed first fetch is retried
        // sooner.
        let period = if current.is_some() {
            self.min_refresh
        } else {
            self.min_refresh.min(Duration::from_secs(2))
        };
        // The period runs from the end of the last attempt: requests that queued behind a
        // slow or failing fetch are answered at once instead of each trying again.
        let allowed = fetching
            .last_attempt
            .is_none_or(|at| at.elapsed() >= period);
        let unreachable = || unavailable("the authorization server's keys could not be fetched");
        if !allowed {
            return current.map(Keys::Held).ok_or_else(unreachable);
        }
        // The fetch is a task of its own, holding the lock until its keys are kept and the
        // attempt recorded. A request stops waiting when its client hangs up or its deadline
        // passes; had it run the fetch, the fetch would end unrecorded, the next request would
        // start another, and a flood of requests given up on would each cost the
        // authorization server a fetch.
        let issuer = self.issuer.clone();
        let named_jwks_uri = self.jwks_uri.clone();
        let cache = Arc::clone(&self.keys);
        let fetch = tokio::spawn(async move {
            let mut fetching = fetching;
            let fetched = tokio::time::timeout(
                FETCH_BUDGET,
                fetch_key_set(&issuer, named_jwks_uri.as_deref(), &mut fetching),
            )
            .await
            .unwrap_or_else(|_| Err(format!("no key set within {} s", FETCH_BUDGET.as_secs())));
            fetching.last_attempt = Some(Instant::now());
            match fetched {
                Ok(keys) => {
                    let keys = Arc::new(keys);
                    *cache.current.write().unwrap_or_else(|p| p.into_inner()) =
                        Some(Arc::clone(&keys));
                    Some(keys)
                }
                Err(failure) => {
                    tracing::warn!(%issuer, "fetching the token keys failed: {failure}");
                    None
                }
            }
        });
        match fetch.await {
            Ok(Some(keys)) => Ok(Keys::Current(keys)),
            // Keys fetched before still verify until a fetch succeeds.
            _ => current.map(Keys::Held).ok_or_else(unreachable),
        }
    }

    fn current(&self) -> Option<Arc<KeySet>> {
        self.keys
            .current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Fetches `issuer`'s key set, from `named_jwks_uri` or else the one its metadata names
/// (found once, then kept in `fetching`).
async fn fetch_key_set(
    issuer: &str,
    named_jwks_uri: Option<&str>,
    fetching: &mut Fetching,
) -> Result<KeySet, String> {
    let fetcher = fetching.fetcher.get_or_insert_with(Fetcher::new).clone();
    let jwks_uri = match (named_jwks_uri, &fetching.jwks_uri) {
        (Some(uri), _) => uri.to_owned(),
        (None, Some(uri)) => uri.clone(),
        (None, None) => {
            let metadata = discovery::discover(&fetcher, issuer).await?;
            let uri = metadata
                .jwks_uri
                .ok_or_else(|| format!("the metadata of `{issuer}` names no jwks_uri"))?;
            fetching.jwks_uri = Some(uri.clone());
            uri
        }
    };
    let document = fetcher.get_json(&jwks_uri).await?;
    let listed = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{jwks_uri} holds no `keys` array"))?;
    let keys: Vec<Key> = listed.iter().filter_map(key).collect();
    tracing::debug!(
        jwks_uri,
        keys = keys.len(),
        listed = listed.len(),
        "fetched the token keys"
    );
    Ok(KeySet {
        keys,
        fetched: Instant::now(),
    })
}

/// A key of the set, if it is a public signing key this verifier can use: symmetric keys
/// (`oct`), encryption keys and keys of unknown types are left out.
fn key(value: &Value) -> Option<Key> {
    let jwk: Jwk = serde_json::from_value(value.clone()).ok()?;
    if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
        return None;
    }
    if matches!(
        jwk.common.public_key_use,
        Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
    ) {
        return None;
    }
    let algorithm = match jwk.common.key_algorithm {
        Some(named) => Some(named.to_string().parse::<Algorithm>().ok()?),
        None => None,
    };
    Some(Key {
        kid: jwk.common.key_id.clone(),
        algorithm,
        key: DecodingKey::from_jwk(&jwk).ok()?,
    })
}

impl KeySet {
    /// The keys a token with this `kid` and `alg` may be verified with: the one of that id,
    /// or without an id every key. A key that names its algorithm is used for that one only,
    /// and a key of another family (RSA for an EC token…) never.
    fn matching(&self, kid: Option<&str>, alg: Algorithm) -> Vec<&Key> {
        self.keys
            .iter()
            .filter(|k| kid.is_none_or(|kid| k.kid.as_deref() == Some(kid)))
            .filter(|k| k.algorithm.is_none_or(|a| a == alg))
            .filter(|k| k.key.family() == alg.family())
            .collect()
    }
}

fn rejection(kind: &jsonwebtoken::errors::ErrorKind) -> AuthRejection {
    use jsonwebtoken::errors::ErrorKind as E;
    let why = match kind {
        E::ExpiredSignature => "the token has expired".to_owned(),
        E::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
        E::InvalidAudience => {
            "the token is for another resource: its audience (aud) is not this server".to_owned()
        }
        E::InvalidIssuer => "the token was issued by another issuer (iss)".to_owned(),
        E::InvalidSignature => "bad signature".to_owned(),
        E::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        E::InvalidAlgorithm => "the token's algorithm does not fit its key".to_owned(),
        _ => "malformed token".to_owned(),
    };
    AuthRejection::InvalidToken(why)
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<AuthInfo, AuthRejection>> + Send + 'a>> {
        Box::pin(self.check(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "`HS256` is not accepted")]
    fn hmac_is_never_allowlisted() {
        let _ = JwtVerifier::new("https://a.example", "https://b.example").algorithms(["HS256"]);
    }

    #[test]
    #[should_panic(expected = "`none` is not accepted")]
    fn none_is_no_algorithm() {
        let _ = JwtVerifier::new("https://a.example", "https://b.example").algorithms(["none"]);
    }

    #[test]
    fn symmetric_and_encryption_keys_are_left_out_of_the_set() {
        let oct = serde_json::json!({"kty": "oct", "kid": "s", "k": "c2VjcmV0"});
        assert!(key(&oct).is_none());
        let rsa = serde_json::json!({
            "kty": "RSA", "kid": "r", "alg": "RS256", "use": "sig", "e": "AQAB",
            "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw"
        });
        let found = key(&rsa).unwrap();
        assert_eq!(found.algorithm, Some(Algorithm::RS256));
        let mut encryption = rsa.clone();
        encryption["use"] = "enc".into();
        assert!(key(&encryption).is_none());
        let set = KeySet {
            keys: vec![found],
            fetched: Instant::now(),
        };
        assert_eq!(set.matching(Some("r"), Algorithm::RS256).len(), 1);
        assert_eq!(set.matching(None, Algorithm::RS256).len(), 1);
        assert!(set.matching(Some("other"), Algorithm::RS256).is_empty());
        // The key says RS256: a PS256 or ES256 token is not verified with it.
        assert!(set.matching(Some("r"), Algorithm::PS256).is_empty());
        assert!(set.matching(Some("r"), Algorithm::ES256).is_empty());
    }

    use super::super::stub_provider::StubProvider;

    const RSA_MODULUS: &str = "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw";

    /// A provider publishing one RSA key, `r`, for RS256, at `/jwks`.
    async fn provider() -> StubProvider {
        StubProvider::start(|_, path| {
            (path == "/jwks").then(|| {
                serde_json::json!({"keys": [{
                    "kty": "RSA", "kid": "r", "alg": "RS256", "use": "sig", "e": "AQAB",
                    "n": RSA_MODULUS
                }]})
                .to_string()
            })
        })
        .await
    }

    fn verifier(provider: &StubProvider) -> JwtVerifier {
        JwtVerifier::new("https://as.example", "https://mcp.example/mcp")
            .jwks_uri(format!("{}/jwks", provider.url))
    }

    /// A token naming the key `kid` and the algorithm `alg`, its signature made up: enough to
    /// make the verifier look for its key.
    fn token(kid: &str, alg: &str) -> String {
        use base64::Engine as _;
        let encode =
            |part: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(part.to_string());
        let header = encode(serde_json::json!({"alg": alg, "kid": kid, "typ": "JWT"}));
        let claims = encode(serde_json::json!({"sub": "ada"}));
        format!("{header}.{claims}.c2lnbmF0dXJl")
    }

    /// Verifies `token` until the provider has received its `n`th request for the key set,
    /// then drops the verification, as the server does when the client hangs up.
    async fn give_up_while_fetching(
        verifier: &JwtVerifier,
        token: &str,
        provider: &StubProvider,
        n: usize,
    ) {
        tokio::select! {
            answer = verifier.check(token) => panic!("answered without the key set: {answer:?}"),
            () = provider.received("/jwks", n) => {}
        }
    }

    #[tokio::test]
    async fn a_first_fetch_given_up_on_still_counts_against_the_refresh_period() {
        let provider = provider().await;
        let v = verifier(&provider);
        let made_up = token("made-up", "RS256");
        give_up_while_fetching(&v, &made_up, &provider, 1).await;
        provider.open();
        let answer = v.check(&made_up).await;
        assert!(
            matches!(answer, Err(AuthRejection::Unavailable(_))),
            "{answer:?}"
        );
        assert_eq!(provider.count("/jwks"), 1, "one fetch for both requests");
    }

    #[tokio::test]
    async fn a_refetch_for_an_unknown_key_given_up_on_serves_the_requests_behind_it() {
        let provider = provider().await;
        provider.open();
        // Every unknown key may fetch the set again: only a fetch under way saves one.
        let v = verifier(&provider).min_refresh(Duration::ZERO);
        let answer = v.check(&token("r", "RS256")).await;
        assert_eq!(
            answer,
            Err(AuthRejection::InvalidToken("bad signature".into()))
        );
        provider.close();
        let made_up = token("made-up", "RS256");
        give_up_while_fetching(&v, &made_up, &provider, 2).await;
        provider.open();
        let answer = v.check(&made_up).await;
        assert!(
            matches!(&answer, Err(AuthRejection::InvalidToken(why)) if why.contains("does not publish")),
            "{answer:?}"
        );
        assert_eq!(provider.count("/jwks"), 2, "the refetch under way was used");
    }

    #[tokio::test]
    async fn a_refetch_of_old_keys_given_up_on_goes_on_while_others_use_the_old_keys() {
        let provider = provider().await;
        provider.open();
        let v = verifier(&provider)
            .max_key_age(Duration::ZERO)
            .min_refresh(Duration::ZERO);
        let signed_by_r = token("r", "RS256");
        let bad_signature = Err(AuthRejection::InvalidToken("bad signature".into()));
        assert_eq!(v.check(&signed_by_r).await, bad_signature);
        provider.close();
        give_up_while_fetching(&v, &signed_by_r, &provider, 2).await;
        tokio::select! {
            answer = v.check(&signed_by_r) => assert_eq!(answer, bad_signature, "the old keys"),
            () = provider.received("/jwks", 3) => panic!("a second fetch while one is under way"),
        }
    }

    #[tokio::test]
    async fn a_known_key_with_another_algorithm_is_refused_without_a_refetch() {
        let provider = provider().await;
        provider.open();
        let v = verifier(&provider);
        let answer = v.check(&token("r", "ES256")).await;
        assert_eq!(
            answer,
            Err(AuthRejection::InvalidToken(
                "the token's algorithm does not fit its key".into()
            ))
        );
        assert_eq!(provider.count("/jwks"), 1);
    }
}
