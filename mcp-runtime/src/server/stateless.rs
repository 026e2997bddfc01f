//! The stateless era (protocol revision 2026-07-28), served beside the handshake era: every
//! request carries its protocol version, client info and capabilities in `_meta`; there is no
//! session; `server/discover` replaces `initialize`. This module tells a stateless request
//! from a handshake one, reads and checks its metadata, and prepares it — a session of its
//! own, its multi round trip — for the dispatch, which serves both eras with the same code;
//! how its result is finished (`resultType`, cache hints, `InputRequiredResult`) is
//! [`Finish`]'s.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Server;
use super::request::{Finish, parse_params};
use crate::protocol::{Implementation, LogLevel, Method, ProtocolVersion, RpcError, Text};
use crate::session::{LazyBinding, Negotiated, RequestChannel, RoundTrip, Session};

/// The stateless revisions this server speaks.
pub const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

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

/// The metadata fields the runtime reads, in the order a message with several of them wrong
/// has them named.
const META_FIELDS: [(&str, &str); 4] = [
    (META_VERSION, "a protocol revision (a string)"),
    (META_CAPABILITIES, "an object"),
    (META_CLIENT_INFO, "an object with `name` and `version`"),
    (META_LOG_LEVEL, "a log level such as \"info\""),
];

/// `_meta` read in one pass over it, as the parameters are read: the metadata, or why it
/// cannot be read (a key given twice, a field of the wrong type, not an object), refused
/// naming the field in `invalidMeta`.
struct MetaRead(Result<RequestMeta, RpcError>);

impl MetaRead {
    fn not_an_object() -> MetaRead {
        MetaRead(Err(invalid_meta(
            "_meta",
            "`_meta` must be an object".to_owned(),
        )))
    }

    /// The metadata from the raw fields found; a repeated key is refused first, then each
    /// field of the wrong type in [`META_FIELDS`]' order; `null` is not given.
    fn of(fields: [Option<&RawValue>; 4], twice: Option<String>) -> MetaRead {
        if let Some(key) = twice {
            let message = format!("`{key}` is given twice in `_meta`");
            return MetaRead(Err(invalid_meta(&key, message)));
        }
        fn field<T: serde::de::DeserializeOwned>(
            raw: Option<&RawValue>,
            (key, expected): (&str, &str),
        ) -> Result<Option<T>, RpcError> {
            match raw {
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
        let [version, capabilities, info, level] = fields;
        let read = || {
            Ok(RequestMeta {
                protocol_version: field(version, META_FIELDS[0])?,
                client_capabilities: field(capabilities, META_FIELDS[1])?,
                client_info: field(info, META_FIELDS[2])?,
                log_level: field(level, META_FIELDS[3])?,
            })
        };
        MetaRead(read())
    }
}

impl<'de> Deserialize<'de> for MetaRead {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess};
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = MetaRead;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("request metadata")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaRead, A::Error> {
                let mut fields: [Option<&'de RawValue>; 4] = [None; 4];
                // Keys of the protocol's namespace beyond those read, to find one given
                // twice: a handful at most, looked through rather than hashed.
                let mut others: Vec<std::borrow::Cow<'de, str>> = Vec::new();
                let mut twice: Option<String> = None;
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    if let Some(at) = META_FIELDS.iter().position(|(name, _)| *name == key) {
                        let raw: &'de RawValue = map.next_value()?;
                        if fields[at].replace(raw).is_some() && twice.is_none() {
                            twice = Some(key.into_owned());
                        }
                        continue;
                    }
                    map.next_value::<IgnoredAny>()?;
                    if twice.is_none() && key.starts_with("io.modelcontextprotocol/") {
                        if others.contains(&key) {
                            twice = Some(key.into_owned());
                        } else {
                            others.push(key);
                        }
                    }
                }
                Ok(MetaRead::of(fields, twice))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MetaRead, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MetaRead::not_an_object())
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<MetaRead, E> {
                Ok(MetaRead::not_an_object())
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<MetaRead, E> {
                Ok(MetaRead::not_an_object())
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<MetaRead, E> {
                Ok(MetaRead::not_an_object())
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<MetaRead, E> {
                Ok(MetaRead::not_an_object())
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<MetaRead, E> {
                Ok(MetaRead::not_an_object())
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

/// Invalid request metadata is refused with -32602 (HTTP 400): `invalidMeta` names the
/// field at fault.
fn invalid_meta(field: &str, message: String) -> RpcError {
    RpcError::invalid_params(message).with_data(json!({ "invalidMeta": field }))
}

/// What a stateless request's parameters carry for the runtime itself, read in one pass.
#[derive(Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<MetaRead>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
}

/// Whether a request belongs to the stateless era: `server/discover`, or a protocol version
/// in its `_meta`. Every request of either era is asked, so the key is looked for at each
/// `/` only, not with a general substring search.
pub(crate) fn is_stateless(method: &str, params: Option<&RawValue>) -> bool {
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

/// A stateless request made ready to serve: a session of its own holding what its `_meta`
/// says, a channel that carries its round trip, and the era's way to finish its result.
pub(super) struct Prepared {
    pub session: Arc<Session>,
    pub channel: RequestChannel,
    pub finish: Finish,
}

impl Server {
    /// Reads and checks a stateless request's metadata, and prepares it (see [`Prepared`]).
    pub(super) fn prepare_stateless(
        &self,
        connection: &Session,
        method: Method,
        params: Option<&RawValue>,
        channel: &RequestChannel,
    ) -> Result<Prepared, RpcError> {
        let p: MetaOnly = parse_params(params)?;
        let MetaRead(meta) = p.meta.ok_or_else(|| {
            invalid_meta(
                "_meta",
                format!("`_meta` with `{META_VERSION}` is required"),
            )
        })?;
        let meta = meta?;
        let requested = meta.protocol_version.ok_or_else(|| {
            invalid_meta(META_VERSION, format!("`_meta` must carry `{META_VERSION}`"))
        })?;
        if meta.client_capabilities.is_none() {
            return Err(invalid_meta(
                META_CAPABILITIES,
                format!("`_meta` must carry `{META_CAPABILITIES}`"),
            ));
        }
        if !STATELESS_VERSIONS.contains(&requested.as_str()) {
            let mut supported: Vec<&str> = STATELESS_VERSIONS.to_vec();
            supported.extend(ProtocolVersion::HANDSHAKE.iter().rev().map(|v| v.as_str()));
            return Err(RpcError::new(
                crate::protocol::code::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version `{requested}`"),
            )
            .with_data(json!({ "supported": supported, "requested": requested })));
        }
        // A request stands alone: a session for it only, holding what its `_meta` says.
        let session = Arc::new(connection.request_scoped(channel.out.clone()));
        session.initialize(Negotiated {
            version: ProtocolVersion::LATEST_HANDSHAKE,
            client_info: meta.client_info.unwrap_or_default(),
            client_capabilities: meta.client_capabilities.unwrap_or_default(),
        });
        match meta.log_level {
            Some(level) => session.set_log_level(level),
            None => session.silence_logs(),
        }
        let mut channel = channel.clone();
        // Requests that run a handler may ask the client for input: the answers so far come
        // sealed in `requestState` and fresh in `inputResponses`.
        if matches!(
            method,
            Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead
        ) {
            let caller = channel.auth.as_ref().map(|a| a.subject.as_str());
            let binding = LazyBinding::new(method.name(), params.map(RawValue::get), caller);
            let mut answers = match &p.request_state {
                Some(sealed) => {
                    self.state_keys()
                        .open(sealed, binding.get())
                        .map_err(RpcError::invalid_params)?
                        .answers
                }
                None => Map::new(),
            };
            let retry = p.request_state.is_some() || p.input_responses.is_some();
            answers.extend(p.input_responses.unwrap_or_default());
            channel.round_trip = Some(Arc::new(RoundTrip::new(binding, answers, retry)));
        }
        let finish = Finish::stateless(self, channel.round_trip.clone());
        Ok(Prepared {
            session,
            channel,
            finish,
        })
    }

    /// `server/discover`: versions, capabilities, server info, instructions, cache hints.
    pub(super) fn discover_result(&self) -> String {
        let mut supported: Vec<&str> = STATELESS_VERSIONS.to_vec();
        supported.extend(ProtocolVersion::HANDSHAKE.iter().rev().map(|v| v.as_str()));
        let initialize: Value = serde_json::from_str(
            &self.inner.initialize_results[ProtocolVersion::LATEST_HANDSHAKE.index()],
        )
        .unwrap_or_default();
        let mut capabilities = initialize["capabilities"].clone();
        // The stateless era declares extensions as such, not as experimental capabilities.
        let mut extensions = self.inner.extensions.clone();
        if let Some(declared) = capabilities.as_object_mut() {
            declared.remove("experimental");
        }
        if self.has(crate::protocol::Needs::Tasks) {
            extensions.insert(super::tasks::EXTENSION.into(), json!({}));
        }
        if !extensions.is_empty() {
            capabilities["extensions"] = Value::Object(extensions);
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
            self.inner.settings.list_cache.insert(obj);
        }
        result.to_string()
    }
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
}
