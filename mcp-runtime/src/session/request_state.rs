//! The `requestState` of multi round-trip requests (2026-07-28): what a handler was told so
//! far, sealed with HMAC-SHA256 so that a client can carry it but not change it.
//!
//! The payload names the request it belongs to (method and a digest of its parameters), the
//! caller, and an expiry, so a state is refused on another request, for another caller, or
//! after it lapses — the replay protections the specification asks for.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// How long a `requestState` stays valid unless the server says otherwise.
pub(crate) const STATE_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// The keys that seal and open `requestState`: the current one, and older ones still
/// accepted while they are rotated out.
#[derive(Clone)]
pub(crate) struct StateKeys {
    current: Vec<u8>,
    previous: Vec<Vec<u8>>,
    /// How long a state sealed now stays valid.
    lifetime: Duration,
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKeys(…)")
    }
}

impl StateKeys {
    /// A random key for this process only: a state it seals opens on no other replica.
    pub(crate) fn random() -> StateKeys {
        let mut key = vec![0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // Without an OS generator, fall back to a key no client can know either: the
            // address space layout and the time.
            let seed = format!("{:p}{:?}", &key, SystemTime::now());
            key = Sha256::digest(seed.as_bytes()).to_vec();
        }
        StateKeys::new(key, Vec::new())
    }

    pub(crate) fn new(current: Vec<u8>, previous: Vec<Vec<u8>>) -> StateKeys {
        StateKeys {
            current,
            previous,
            lifetime: STATE_LIFETIME,
        }
    }

    /// Refuses keys shorter than `min` bytes: an HMAC key is as strong as it is long, and a
    /// short one (a password, an empty variable) lets anyone who guesses it forge states.
    /// The first key under `min` bytes, as (`"current"` or `"previous"`, its length).
    pub(crate) fn check(&self, min: usize) -> Result<(), (&'static str, usize)> {
        let short = std::iter::once(("current", &self.current))
            .chain(self.previous.iter().map(|k| ("previous", k)))
            .find(|(_, key)| key.len() < min);
        match short {
            Some((which, key)) => Err((which, key.len())),
            None => Ok(()),
        }
    }

    /// The same keys, sealing states that stay valid for `lifetime`.
    pub(crate) fn lasting(self, lifetime: Duration) -> StateKeys {
        StateKeys { lifetime, ..self }
    }

    /// Seals a new state: the request it belongs to and the answers so far, valid for the
    /// keys' lifetime from now.
    pub(crate) fn seal_new(&self, binding: Binding, answers: Map<String, Value>) -> String {
        let mut state = SealedState::new(binding, answers);
        state.expires = now_secs() + self.lifetime.as_secs().max(1);
        self.seal(&state)
    }

    fn mac(key: &[u8], payload: &[u8]) -> HmacSha256 {
        // HMAC takes keys of any length.
        let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|_| {
            HmacSha256::new_from_slice(&Sha256::digest(key)).expect("a 32-byte key")
        });
        mac.update(payload);
        mac
    }

    /// Seals a state.
    pub(crate) fn seal(&self, state: &SealedState) -> String {
        let payload = serde_json::to_vec(state).unwrap_or_default();
        let tag = Self::mac(&self.current, &payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Opens a state sealed with any of the keys, checking what it is bound to.
    pub(crate) fn open(&self, sealed: &str, expect: &Binding) -> Result<SealedState, &'static str> {
        let (payload, tag) = sealed.split_once('.').ok_or("requestState is malformed")?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| "requestState is malformed")?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| "requestState is malformed")?;
        let authentic = std::iter::once(&self.current)
            .chain(&self.previous)
            .any(|key| Self::mac(key, &payload).verify_slice(&tag).is_ok());
        if !authentic {
            return Err("requestState was not issued by this server or was changed");
        }
        let state: SealedState =
            serde_json::from_slice(&payload).map_err(|_| "requestState is malformed")?;
        if state.binding.method != expect.method || state.binding.params != expect.params {
            return Err("requestState belongs to another request");
        }
        if state.binding.caller != expect.caller {
            return Err("requestState belongs to another caller");
        }
        if state.expires < now_secs() {
            return Err("requestState has expired; send the request again without it");
        }
        Ok(state)
    }
}

/// What a state is bound to: the request (method and parameter digest) and the caller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Binding {
    #[serde(rename = "m")]
    pub method: String,
    #[serde(rename = "p")]
    pub params: String,
    #[serde(rename = "c")]
    pub caller: String,
}

impl Binding {
    /// Binds to a method, the parameters that identify the request (without `_meta`,
    /// `inputResponses` and `requestState`), and the caller.
    pub(crate) fn new(method: &str, params: Option<&Value>, caller: Option<&str>) -> Binding {
        let mut salient = params.cloned().unwrap_or(Value::Null);
        if let Some(obj) = salient.as_object_mut() {
            for key in ["_meta", "inputResponses", "requestState"] {
                obj.remove(key);
            }
        }
        let digest = Sha256::digest(canonical(&salient).as_bytes());
        Binding {
            method: method.to_owned(),
            params: URL_SAFE_NO_PAD.encode(digest),
            caller: caller.unwrap_or("").to_owned(),
        }
    }
}

/// JSON with object keys in order, so equal values digest equally.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// The sealed payload: the binding, an expiry, and every answer the client gave so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SealedState {
    #[serde(rename = "b")]
    pub binding: Binding,
    #[serde(rename = "e")]
    pub expires: u64,
    #[serde(rename = "a", default)]
    pub answers: Map<String, Value>,
}

impl SealedState {
    pub(crate) fn new(binding: Binding, answers: Map<String, Value>) -> SealedState {
        SealedState {
            binding,
            expires: now_secs() + STATE_LIFETIME.as_secs(),
            answers,
        }
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn binding() -> Binding {
        Binding::new(
            "tools/call",
            Some(&json!({"name": "t", "arguments": {"b": 1, "a": 2}})),
            Some("ada"),
        )
    }

    #[test]
    fn a_sealed_state_opens_with_its_answers() {
        let keys = StateKeys::random();
        let mut answers = Map::new();
        answers.insert("k".into(), json!({"action": "accept"}));
        let sealed = keys.seal(&SealedState::new(binding(), answers.clone()));
        assert_eq!(keys.open(&sealed, &binding()).unwrap().answers, answers);
    }

    #[test]
    fn parameter_order_and_meta_do_not_change_the_binding() {
        let other = Binding::new(
            "tools/call",
            Some(
                &json!({"arguments": {"a": 2, "b": 1}, "name": "t", "_meta": {"x": 1}, "requestState": "s"}),
            ),
            Some("ada"),
        );
        assert_eq!(other, binding());
    }

    #[test]
    fn tampered_foreign_rebound_and_expired_states_are_refused() {
        let keys = StateKeys::random();
        let sealed = keys.seal(&SealedState::new(binding(), Map::new()));
        let (payload, tag) = sealed.split_once('.').unwrap();
        let mut forged = URL_SAFE_NO_PAD.decode(payload).unwrap();
        forged[5] ^= 1;
        let forged = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(forged));
        assert!(keys.open(&forged, &binding()).is_err());
        assert!(
            StateKeys::random().open(&sealed, &binding()).is_err(),
            "another key"
        );
        let elsewhere = Binding::new("tools/call", Some(&json!({"name": "u"})), Some("ada"));
        assert_eq!(
            keys.open(&sealed, &elsewhere),
            Err("requestState belongs to another request")
        );
        let someone = Binding::new(
            "tools/call",
            Some(&json!({"name": "t", "arguments": {"b": 1, "a": 2}})),
            Some("eve"),
        );
        assert_eq!(
            keys.open(&sealed, &someone),
            Err("requestState belongs to another caller")
        );
        let mut old = SealedState::new(binding(), Map::new());
        old.expires = 1;
        assert!(
            keys.open(&keys.seal(&old), &binding())
                .unwrap_err()
                .contains("expired")
        );
        assert!(keys.open("garbage", &binding()).is_err());
    }

    #[test]
    fn states_sealed_with_a_previous_key_still_open() {
        let old = StateKeys::new(b"old key".to_vec(), Vec::new());
        let sealed = old.seal(&SealedState::new(binding(), Map::new()));
        let rotated = StateKeys::new(b"new key".to_vec(), vec![b"old key".to_vec()]);
        assert!(rotated.open(&sealed, &binding()).is_ok());
    }
}
