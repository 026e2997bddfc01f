//! The multi round trip of a stateless request (2026-07-28): the answers the client sent so
//! far, and the input requests its handler made that have no answer yet, which end the call
//! with an `InputRequiredResult` whose sealed `requestState` the retry brings back.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value, json};

use super::request_state::{Binding, StateKeys};
use crate::protocol::RpcError;

/// One stateless request that may ask the client for input: the answers known so far, and
/// the input requests its handler made that have no answer yet.
pub(crate) struct RoundTrip {
    /// Whether the request is a retry (it carries answers or a state), whose result depends
    /// on more than its cache key.
    pub retry: bool,
    binding: LazyBinding,
    answers: Map<String, Value>,
    pending: Mutex<Vec<(String, Value)>>,
    asked: AtomicUsize,
    names: Mutex<Vec<Option<String>>>,
    missing: Mutex<Vec<Vec<&'static str>>>,
}

/// The [`Binding`] of a request, worked out from its method, parameters and caller only when
/// a `requestState` is opened or sealed: most requests never ask the client for input, and
/// the binding costs a parse, a canonical form and a digest of the parameters.
pub(crate) struct LazyBinding {
    method: &'static str,
    params: Option<String>,
    caller: Option<String>,
    made: OnceLock<Binding>,
}

impl LazyBinding {
    pub(crate) fn new(method: &'static str, params: Option<&str>, caller: Option<&str>) -> Self {
        LazyBinding {
            method,
            params: params.map(str::to_owned),
            caller: caller.map(str::to_owned),
            made: OnceLock::new(),
        }
    }

    pub(crate) fn get(&self) -> &Binding {
        self.made.get_or_init(|| {
            let params = self.params.as_deref().map(readable_params);
            Binding::new(self.method, params.as_ref(), self.caller.as_deref())
        })
    }
}

/// The parameters as a value to bind. Their text may hold what no JSON value holds (a
/// number past `f64`'s range, a lone surrogate), which the message's reading lets through:
/// then each member is read alone, and a member that cannot be is bound by its text. Read
/// as nothing, every such request of one method and caller would share one binding, and a
/// state sealed for one tool would open for another.
fn readable_params(text: &str) -> Value {
    use serde_json::value::RawValue;
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    let unreadable = |text: &str| Value::String(format!("\u{0}unreadable JSON: {text}"));
    match serde_json::from_str::<std::collections::BTreeMap<String, Box<RawValue>>>(text) {
        Ok(members) => Value::Object(
            members
                .into_iter()
                .map(|(key, raw)| {
                    let value =
                        serde_json::from_str(raw.get()).unwrap_or_else(|_| unreadable(raw.get()));
                    (key, value)
                })
                .collect(),
        ),
        Err(_) => unreadable(text),
    }
}

impl RoundTrip {
    /// A request's round trip: what binds its `requestState`, the answers it brings, and
    /// whether it is a retry.
    pub(crate) fn new(binding: LazyBinding, answers: Map<String, Value>, retry: bool) -> Self {
        RoundTrip {
            retry,
            binding,
            answers,
            pending: Mutex::new(Vec::new()),
            asked: AtomicUsize::new(0),
            names: Mutex::new(Vec::new()),
            missing: Mutex::new(Vec::new()),
        }
    }

    /// The key of the handler's next input request: the name it gave with
    /// [`RoundTrip::name_inputs`], or `<method>-<n>` in the order it asks, which is the same
    /// on every run.
    pub(crate) fn next_key(&self, method: &str) -> String {
        let n = self.asked.fetch_add(1, Ordering::Relaxed);
        let named = self
            .names
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(n)
            .cloned()
            .flatten();
        named.unwrap_or_else(|| format!("{}-{n}", method.replace('/', "-")))
    }

    /// The answer to the handler's next input request, or `None` after recording it as
    /// pending.
    pub(crate) fn answer(&self, method: &str, params: Value) -> Option<Value> {
        let key = self.next_key(method);
        if let Some(answer) = self.answers.get(&key) {
            return Some(answer.clone());
        }
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((key, json!({ "method": method, "params": params })));
        None
    }

    /// Names the input requests the handler makes from now on, in the order it asks.
    pub(crate) fn name_inputs(&self, keys: Vec<String>) {
        let asked = self.asked.load(Ordering::Relaxed);
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        names.truncate(asked);
        while names.len() < asked {
            names.push(None);
        }
        names.extend(keys.into_iter().map(Some));
    }

    /// Records a capability the handler needed and the client did not declare.
    pub(crate) fn note_missing(&self, path: &[&'static str]) {
        self.missing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(path.to_vec());
    }

    /// When the handler failed after needing capabilities the client did not declare: the
    /// `MissingRequiredClientCapabilityError` (-32021) naming them.
    pub(crate) fn missing_capability(&self, result: &Result<String, RpcError>) -> Option<RpcError> {
        let missing = self.missing.lock().unwrap_or_else(|p| p.into_inner());
        if missing.is_empty() {
            return None;
        }
        let failed = match result {
            Err(_) => true,
            Ok(result) => serde_json::from_str::<Value>(result)
                .is_ok_and(|v| v.get("isError") == Some(&Value::Bool(true))),
        };
        if !failed {
            return None;
        }
        let mut required = Map::new();
        for path in missing.iter() {
            let mut slot = &mut required;
            for part in path {
                slot = slot
                    .entry(part.to_string())
                    .or_insert_with(|| json!({}))
                    .as_object_mut()?;
            }
        }
        let names: Vec<String> = missing.iter().map(|p| p.join(".")).collect();
        Some(
            RpcError::new(
                crate::protocol::code::MISSING_CLIENT_CAPABILITY,
                format!(
                    "the request needs client capabilities it did not declare: {}",
                    names.join(", ")
                ),
            )
            .with_data(json!({ "requiredCapabilities": required })),
        )
    }

    /// Whether the handler asked for anything unanswered: the call ends with an
    /// `InputRequiredResult`.
    pub(crate) fn wants_input(&self) -> bool {
        !self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// The `InputRequiredResult` when the handler asked for anything unanswered, its
    /// answers so far sealed with `keys`.
    pub(crate) fn input_required(&self, keys: &StateKeys) -> Option<String> {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        if pending.is_empty() {
            return None;
        }
        let requests: Map<String, Value> = pending.into_iter().collect();
        let state = keys.seal_new(self.binding.get().clone(), self.answers.clone());
        Some(
            json!({
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": state,
            })
            .to_string(),
        )
    }
}
