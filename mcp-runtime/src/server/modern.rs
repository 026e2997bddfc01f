//! The stateless era (protocol revision 2026-07-28), served beside the handshake era: every
//! request carries its protocol version, client info and capabilities in `_meta`; there is no
//! session; `server/discover` replaces `initialize`; every result says its `resultType`, and
//! lists carry cache hints. Requests to the client become multi round-trip requests: the
//! handler's call ends with an `InputRequiredResult`, and the retry brings the answers.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Server;
use super::dispatch::{Routed, parse_params};
use crate::protocol::CacheHint;
use crate::protocol::{
    Implementation, LogLevel, ProtocolVersion, RequestId, RpcError, response_frame,
};
use crate::session::RoundTrip;
use crate::session::request_state::Binding;
use crate::session::{Negotiated, RequestChannel, Session};

/// The stateless revisions this server speaks.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The request metadata every stateless request carries.
struct RequestMeta {
    protocol_version: Option<String>,
    client_capabilities: Option<Map<String, Value>>,
    client_info: Option<Implementation>,
    log_level: Option<LogLevel>,
}

impl RequestMeta {
    /// Reads `_meta`; a field of the wrong type is refused naming it in `invalidMeta`.
    fn read(raw: &RawValue) -> Result<RequestMeta, RpcError> {
        let Fields(entries) = serde_json::from_str(raw.get())
            .map_err(|_| invalid_meta("_meta", "`_meta` must be an object".to_owned()))?;
        let mut fields = std::collections::HashMap::with_capacity(entries.len());
        for (key, value) in entries {
            if key.starts_with("io.modelcontextprotocol/") && fields.contains_key(&key) {
                return Err(invalid_meta(
                    &key,
                    format!("`{key}` is given twice in `_meta`"),
                ));
            }
            fields.insert(key, value);
        }
        fn field<'a, T: Deserialize<'a>>(
            fields: &std::collections::HashMap<std::borrow::Cow<'a, str>, &'a RawValue>,
            key: &str,
            expected: &str,
        ) -> Result<Option<T>, RpcError> {
            match fields.get(key) {
                None => Ok(None),
                Some(raw) if raw.get() == "null" => Ok(None),
                Some(raw) => serde_json::from_str(raw.get()).map(Some).map_err(|_| {
                    invalid_meta(
                        key,
                        format!("`{key}` in `_meta` must be {expected}, not {}", raw.get()),
                    )
                }),
            }
        }
        Ok(RequestMeta {
            protocol_version: field(&fields, META_VERSION, "a protocol revision (a string)")?,
            client_capabilities: field(&fields, META_CAPABILITIES, "an object")?,
            client_info: field(
                &fields,
                META_CLIENT_INFO,
                "an object with `name` and `version`",
            )?,
            log_level: field(&fields, META_LOG_LEVEL, "a log level such as \"info\"")?,
        })
    }
}

/// The members of a JSON object in order, repeated keys and all (a map keeps the last).
struct Fields<'a>(Vec<(std::borrow::Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) =
                    map.next_entry::<std::borrow::Cow<'de, str>, &'de RawValue>()?
                {
                    entries.push(entry);
                }
                Ok(Fields(entries))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// Invalid request metadata is refused with -32602 (HTTP 400): `invalidMeta` names the
/// field at fault.
fn invalid_meta(field: &str, message: String) -> RpcError {
    RpcError::invalid_params(message).with_data(json!({ "invalidMeta": field }))
}

#[derive(Deserialize)]
struct MetaOnly<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
}

/// Whether a request belongs to the stateless era: `server/discover`, or a protocol version
/// in its `_meta`. Every request of either era is asked, so the key is looked for at each
/// `/` only, not with a general substring search.
pub(crate) fn is_modern(method: &str, params: Option<&RawValue>) -> bool {
    method == "server/discover"
        || params.is_some_and(|p| names_a_revision(p.get().as_bytes()) && in_meta(p))
}

/// Whether the key found in the parameters is in their `_meta`, not in an argument that
/// happens to hold the same text.
fn in_meta(params: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct MetaOf<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<&'a RawValue>,
    }
    serde_json::from_str::<MetaOf<'_>>(params.get())
        .ok()
        .and_then(|p| p.meta)
        .is_some_and(|meta| names_a_revision(meta.get().as_bytes()))
}

fn names_a_revision(params: &[u8]) -> bool {
    let (before, after) = META_VERSION
        .split_once('/')
        .map_or(("", ""), |(b, a)| (b, a));
    let (before, after) = (before.as_bytes(), after.as_bytes());
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'/', &params[from..]) {
        let slash = from + i;
        if slash >= before.len()
            && &params[slash - before.len()..slash] == before
            && params[slash + 1..].starts_with(after)
        {
            return true;
        }
        from = slash + 1;
    }
    false
}

/// Marks a result complete, as every stateless result must say.
pub(crate) fn complete(result: &str, cache: Option<CacheHint>) -> String {
    // Every result the runtime builds is one serialised object; the fields go in front of its
    // members, so the result is not parsed again on every stateless request.
    let Some(members) = result.trim_start().strip_prefix('{') else {
        return result.to_owned();
    };
    let mut out = String::with_capacity(result.len() + 64);
    out.push_str("{\"resultType\":\"complete\"");
    if let Some(cache) = cache {
        let scope = if cache.public { "public" } else { "private" };
        out.push_str(&format!(
            ",\"ttlMs\":{},\"cacheScope\":\"{scope}\"",
            cache.ttl_ms
        ));
    }
    if !members.trim_start().starts_with('}') {
        out.push(',');
    }
    out.push_str(members);
    out
}

impl Server {
    pub(super) fn modern_request(
        &self,
        connection: &Session,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
        out: &RequestChannel,
    ) -> Result<Routed, RpcError> {
        // A method this era lacks is not found, whatever its metadata says.
        let known = match method {
            "tools/list" | "tools/call" => self.has_capability(super::Capability::Tools),
            "prompts/list" | "prompts/get" => self.has_capability(super::Capability::Prompts),
            "resources/list" | "resources/templates/list" | "resources/read" => {
                self.has_capability(super::Capability::Resources)
            }
            "completion/complete" => {
                self.has_capability(super::Capability::Prompts)
                    || self.has_capability(super::Capability::Resources)
            }
            // `ping` went with the handshake: a stateless request stands alone.
            "server/discover" | "subscriptions/listen" => true,
            "tasks/get" | "tasks/update" | "tasks/cancel" => self.serves_tasks(),
            _ => false,
        };
        if !known {
            return Err(RpcError::method_not_found(method));
        }
        let p: MetaOnly<'_> = parse_params(params)?;
        let meta = p.meta.filter(|m| m.get() != "null").ok_or_else(|| {
            invalid_meta(
                "_meta",
                format!("`_meta` with `{META_VERSION}` is required"),
            )
        })?;
        let meta = RequestMeta::read(meta)?;
        let requested = meta.protocol_version.ok_or_else(|| {
            invalid_meta(META_VERSION, format!("`_meta` must carry `{META_VERSION}`"))
        })?;
        if meta.client_capabilities.is_none() {
            return Err(invalid_meta(
                META_CAPABILITIES,
                format!("`_meta` must carry `{META_CAPABILITIES}`"),
            ));
        }
        if !MODERN_VERSIONS.contains(&requested.as_str()) {
            let mut supported: Vec<&str> = MODERN_VERSIONS.to_vec();
            supported.extend(ProtocolVersion::HANDSHAKE.iter().rev().map(|v| v.as_str()));
            return Err(RpcError::new(
                crate::protocol::code::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version `{requested}`"),
            )
            .with_data(json!({ "supported": supported, "requested": requested })));
        }
        // A request stands alone: a session for it only, holding what its `_meta` says.
        let session = Arc::new(connection.request_scoped(out.out.clone()));
        session.initialize(Negotiated {
            version: ProtocolVersion::LATEST_HANDSHAKE,
            client_info: meta.client_info.unwrap_or_default(),
            client_capabilities: meta.client_capabilities.unwrap_or_default(),
        });
        match meta.log_level {
            Some(level) => session.set_log_level(level),
            None => session.silence_logs(),
        }
        let version = ProtocolVersion::LATEST_HANDSHAKE;
        let lists = Some(self.inner.list_cache);
        let reply = |result: String, cache: Option<CacheHint>| {
            Ok(Routed::Reply(Some(response_frame(
                id,
                &complete(&result, cache),
            ))))
        };
        match method {
            "server/discover" => reply(self.discover_result(), None),
            "tools/list" => reply(self.list_tools(version, params)?, lists),
            "prompts/list" => reply(self.list_prompts(version, params)?, lists),
            "resources/templates/list" => {
                reply(self.list_resource_templates(version, params)?, lists)
            }
            "resources/list" => Ok(wrap_deferred(
                self.list_resources(id, version, params)?,
                lists,
            )),
            "completion/complete" => reply(self.complete(params)?, None),
            "subscriptions/listen" => self.listen(&session, id, params, out),
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                let caller = out.auth.as_ref().map(|a| a.subject.clone());
                self.task_request(&session, id, method, params, caller)
            }
            _ => {
                // tools/call, prompts/get, resources/read: the answers so far come sealed in
                // `requestState` and fresh in `inputResponses`.
                let params_value: Option<Value> =
                    params.and_then(|p| serde_json::from_str(p.get()).ok());
                let caller = out.auth.as_ref().map(|a| a.subject.as_str());
                let binding = Binding::new(method, params_value.as_ref(), caller);
                let mut answers = match &p.request_state {
                    Some(sealed) => {
                        self.state_keys()
                            .open(sealed, &binding)
                            .map_err(RpcError::invalid_params)?
                            .answers
                    }
                    None => Map::new(),
                };
                let retry = p.request_state.is_some() || p.input_responses.is_some();
                answers.extend(p.input_responses.unwrap_or_default());
                let round_trip = Arc::new(RoundTrip::new(binding, answers, retry));
                let mut channel = out.clone();
                channel.round_trip = Some(round_trip);
                match method {
                    "tools/call" => self.call_tool(&session, id, version, params, &channel),
                    "prompts/get" => self.get_prompt(&session, id, version, params, &channel),
                    _ => self.read_resource(&session, id, params, &channel),
                }
            }
        }
    }

    /// `server/discover`: versions, capabilities, server info, instructions, cache hints.
    fn discover_result(&self) -> String {
        let mut supported: Vec<&str> = MODERN_VERSIONS.to_vec();
        supported.extend(ProtocolVersion::HANDSHAKE.iter().rev().map(|v| v.as_str()));
        let initialize: Value = serde_json::from_str(
            &self.inner.initialize_results[ProtocolVersion::LATEST_HANDSHAKE.index()],
        )
        .unwrap_or_default();
        let mut capabilities = initialize["capabilities"].clone();
        if self.serves_tasks() {
            capabilities["extensions"] = json!({ super::tasks::EXTENSION: {} });
        }
        let mut result = json!({
            "supportedVersions": supported,
            "capabilities": capabilities,
            "_meta": { "io.modelcontextprotocol/serverInfo": initialize["serverInfo"] },
        });
        if let Some(instructions) = initialize.get("instructions") {
            result["instructions"] = instructions.clone();
        }
        if let Some(obj) = result.as_object_mut() {
            self.inner.list_cache.insert(obj);
        }
        result.to_string()
    }
}

/// Marks the result of a deferred list complete.
fn wrap_deferred(routed: Routed, cache: Option<CacheHint>) -> Routed {
    match routed {
        Routed::Deferred(call) => Routed::Deferred(Box::pin(async move {
            let frame = call.await?;
            Some(rewrap_frame(&frame, cache))
        })),
        Routed::Reply(Some(frame)) => Routed::Reply(Some(rewrap_frame(&frame, cache))),
        other => other,
    }
}

/// Adds `resultType` (and cache hints) to the result of a serialised response.
fn rewrap_frame(frame: &[u8], cache: Option<CacheHint>) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(frame) else {
        return frame.to_vec();
    };
    if let Some(result) = value.get_mut("result").and_then(Value::as_object_mut) {
        result.insert("resultType".into(), "complete".into());
        if let Some(cache) = cache {
            cache.insert(result);
        }
    }
    serde_json::to_vec(&value).unwrap_or_else(|_| frame.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stateless_revision_is_found_in_the_meta() {
        assert!(names_a_revision(
            br#"{"name":"a/b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#
        ));
        assert!(!names_a_revision(
            br#"{"name":"tools/call","x":"io.modelcontextprotocol/other"}"#
        ));
        assert!(!names_a_revision(br#"/protocolVersion"#));
    }

    #[test]
    fn completing_a_result_adds_its_type_and_cache_hints() {
        let hint = Some(CacheHint {
            ttl_ms: 5,
            public: false,
        });
        let done: Value = serde_json::from_str(&complete(r#"{"tools":[]}"#, hint)).unwrap();
        assert_eq!(
            done,
            json!({"resultType": "complete", "ttlMs": 5, "cacheScope": "private", "tools": []})
        );
        let done: Value = serde_json::from_str(&complete("{}", None)).unwrap();
        assert_eq!(done, json!({"resultType": "complete"}));
    }
}
