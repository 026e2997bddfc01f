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
use crate::protocol::messages::CallToolParams;
use crate::protocol::{Implementation, LogLevel, Method, ProtocolVersion, RpcError, Text};
use crate::session::{LazyBinding, Negotiated, RequestChannel, RoundTrip, Session};

/// The stateless revisions this server speaks.
pub const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The request metadata every stateless request carries.
struct RequestMeta<'a> {
    /// Borrowed from the message: it is only compared.
    protocol_version: Option<Text<'a>>,
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

/// `_meta` as one pass over the parameters finds it: the raw fields the runtime reads (in
/// [`META_FIELDS`]' order) and the first key of the protocol's namespace given twice; or not
/// an object. Reading the fields into their types is [`read`](Self::read)'s.
#[derive(Clone)]
enum MetaRead<'a> {
    NotAnObject,
    Fields {
        fields: [Option<&'a RawValue>; 4],
        twice: Option<String>,
        /// `progressToken`, for `tools/call` (see [`StatelessParams::call_tool`]), and
        /// whether it was given more than once.
        progress_token: Option<&'a RawValue>,
        progress_token_twice: bool,
    },
}

impl<'a> MetaRead<'a> {
    /// The metadata, or why it cannot be read (refused naming the field in `invalidMeta`):
    /// a repeated key first, then each field of the wrong type in [`META_FIELDS`]' order;
    /// `null` is not given.
    fn read(&self) -> Result<RequestMeta<'a>, RpcError> {
        let (fields, twice) = match self {
            MetaRead::NotAnObject => {
                return Err(invalid_meta(
                    "_meta",
                    "`_meta` must be an object".to_owned(),
                ));
            }
            MetaRead::Fields { fields, twice, .. } => (fields, twice),
        };
        if let Some(key) = twice {
            return Err(invalid_meta(
                key,
                format!("`{key}` is given twice in `_meta`"),
            ));
        }
        fn field<'a, T: Deserialize<'a>>(
            raw: Option<&'a RawValue>,
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
        let [version, capabilities, info, level] = *fields;
        Ok(RequestMeta {
            protocol_version: field(version, META_FIELDS[0])?,
            client_capabilities: field(capabilities, META_FIELDS[1])?,
            client_info: field(info, META_FIELDS[2])?,
            log_level: field(level, META_FIELDS[3])?,
        })
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MetaRead<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess};
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = MetaRead<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("request metadata")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields: [Option<&'a RawValue>; 4] = [None; 4];
                // Keys of the protocol's namespace beyond those read, to find one given
                // twice. Hashed: a client may send as many as the body limit holds, and
                // looking each up in a list of those before it took seconds of CPU for a
                // few megabytes of them. Empty (no allocation) for a request with none.
                let mut others: std::collections::HashSet<std::borrow::Cow<'de, str>> =
                    std::collections::HashSet::new();
                let mut twice: Option<String> = None;
                let mut progress_token: Option<&'a RawValue> = None;
                let mut progress_token_twice = false;
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    if let Some(at) = META_FIELDS.iter().position(|(name, _)| *name == key) {
                        let raw: &'de RawValue = map.next_value()?;
                        if fields[at].replace(raw).is_some() && twice.is_none() {
                            twice = Some(key.into_owned());
                        }
                        continue;
                    }
                    if key == "progressToken" {
                        let raw: &'de RawValue = map.next_value()?;
                        progress_token_twice |= progress_token.replace(raw).is_some();
                        continue;
                    }
                    map.next_value::<IgnoredAny>()?;
                    if twice.is_none() && key.starts_with("io.modelcontextprotocol/") {
                        if others.contains(&key) {
                            twice = Some(key.into_owned());
                        } else {
                            others.insert(key);
                        }
                    }
                }
                Ok(MetaRead::Fields {
                    fields,
                    twice,
                    progress_token,
                    progress_token_twice,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MetaRead::NotAnObject)
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MetaRead::NotAnObject)
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MetaRead::NotAnObject)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MetaRead::NotAnObject)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MetaRead::NotAnObject)
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MetaRead::NotAnObject)
            }
        }
        deserializer.deserialize_any(Visit(std::marker::PhantomData))
    }
}

/// Invalid request metadata is refused with -32602 (HTTP 400): `invalidMeta` names the
/// field at fault.
fn invalid_meta(field: &str, message: String) -> RpcError {
    RpcError::invalid_params(message).with_data(json!({ "invalidMeta": field }))
}

/// A stateless request's parameters as far as the runtime reads them, in one pass over
/// them: what the HTTP transport compares the request's headers with (the names, the
/// arguments, the revision in `_meta`), and what the request is prepared from (the rest of
/// `_meta`, the answers of a multi round trip). Members are kept as they stand, so reading
/// them never fails but for parameters that are not an object.
#[derive(Clone, Default, Deserialize)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) struct StatelessParams<'a> {
    #[serde(borrow, default)]
    pub name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub uri: Option<&'a RawValue>,
    #[serde(rename = "taskId", borrow, default)]
    pub task_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaRead<'a>>,
    #[serde(rename = "inputResponses", borrow, default)]
    input_responses: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow, default)]
    request_state: Option<&'a RawValue>,
}

impl<'a> StatelessParams<'a> {
    /// Reads the parameters (absent ones as an empty object).
    pub(crate) fn read(params: Option<&'a RawValue>) -> Result<Self, RpcError> {
        parse_params(params)
    }

    /// Whether `_meta` is there and is not an object.
    #[cfg(feature = "http")]
    pub(crate) fn meta_is_not_an_object(&self) -> bool {
        matches!(self.meta, Some(MetaRead::NotAnObject))
    }

    /// The revision `_meta` names, as it stands; `None` when it names none (or `null`).
    #[cfg(feature = "http")]
    pub(crate) fn meta_version(&self) -> Option<&'a RawValue> {
        match &self.meta {
            Some(MetaRead::Fields { fields, .. }) => fields[0].filter(|v| v.get() != "null"),
            _ => None,
        }
    }

    /// The parameters of `tools/call`, from this reading rather than a pass of their own
    /// over the text (which, for a stateless request, skips its whole `_meta` once more).
    /// `None` unless they read plainly — a name that is a string, a `_meta` object with at
    /// most one `progressToken` that reads as one: anything else is read from the text
    /// as before, which refuses it as it always has.
    pub(crate) fn call_tool(&self) -> Option<CallToolParams<'a>> {
        let Some(MetaRead::Fields {
            progress_token,
            progress_token_twice: false,
            ..
        }) = &self.meta
        else {
            return None;
        };
        let progress_token = match progress_token.filter(|t| t.get() != "null") {
            Some(token) => Some(serde_json::from_str(token.get()).ok()?),
            None => None,
        };
        let Text(name) = serde_json::from_str(self.name?.get()).ok()?;
        Some(CallToolParams {
            name,
            arguments: self.arguments,
            meta: Some(crate::protocol::messages::RequestMeta { progress_token }),
        })
    }
}

/// A member of the parameters read into its type, refused as the parameters' reading
/// refuses a member of the wrong type; absent or `null` is not given.
fn member<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Result<Option<T>, RpcError> {
    match raw.filter(|r| r.get() != "null") {
        Some(raw) => parse_params(Some(raw)).map(Some),
        None => Ok(None),
    }
}

/// Whether a request belongs to the stateless era: `server/discover`, or a protocol version
/// in its `_meta`. Every request of either era is asked, so `_meta` is read only when the
/// quick look of [`may_name_a_revision`] says the key may be there.
pub(crate) fn is_stateless(method: &str, params: Option<&RawValue>) -> bool {
    method == Method::ServerDiscover.name()
        || params.is_some_and(|p| may_name_a_revision(p.get().as_bytes()) && in_meta(p))
}

/// Whether the key found in the parameters is a member of their `_meta`, not text in an
/// argument or in another member's value (a `progressToken` may hold any string): what the
/// HTTP endpoint's reading of `_meta` finds too, so that the two agree on the era.
fn in_meta(params: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct MetaOf<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<&'a RawValue>,
    }
    serde_json::from_str::<MetaOf<'_>>(params.get())
        .ok()
        .and_then(|p| p.meta)
        .is_some_and(|meta| may_name_a_revision(meta.get().as_bytes()) && has_version_key(meta))
}

/// Whether the text may hold the revision's key, the quick look before a reading of
/// `_meta` tells: the key as it stands, or an escape that may write one of its characters
/// (`\/`, as some serialisers write every slash, or `\u`; one after an escaped backslash
/// too, which costs only a reading more; `\n`, `\"` and the rest write none). The HTTP
/// endpoint asks it of a whole body and the dispatch of a request's parameters, so that the
/// two agree on every request's era.
pub(crate) fn may_name_a_revision(text: &[u8]) -> bool {
    use memchr::memmem::Finder;
    use std::sync::LazyLock;
    // Built once: building a searcher costs more than a small body's scan, and a large
    // body's is one vectorised pass, not a compare at each byte or each `/`.
    static KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(META_VERSION));
    static SLASH: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br"\/"));
    static UNICODE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br"\u"));
    KEY.find(text).is_some()
        || (memchr::memchr(b'\\', text).is_some()
            && (SLASH.find(text).is_some() || UNICODE.find(text).is_some()))
}

/// Whether `_meta` is an object with the revision's key among its members (whatever its
/// value: a `null` or a number there is refused as the stateless era's metadata). A `_meta`
/// that is no object but holds the key's text is taken for the stateless era too, whose
/// reading refuses it (`-32602`): no era accepts it.
fn has_version_key(meta: &RawValue) -> bool {
    if !meta.get().starts_with('{') {
        return true;
    }
    struct Members;
    impl<'de> serde::de::Visitor<'de> for Members {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut found = false;
            while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                map.next_value::<serde::de::IgnoredAny>()?;
                found |= key == META_VERSION;
            }
            Ok(found)
        }
    }
    let mut reader = serde_json::Deserializer::from_str(meta.get());
    serde::Deserializer::deserialize_map(&mut reader, Members).unwrap_or(false)
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
    /// `read`, when given, is what the transport read of these same parameters.
    pub(super) fn prepare_stateless(
        &self,
        connection: &Arc<Session>,
        method: Method,
        params: Option<&RawValue>,
        p: &StatelessParams<'_>,
        channel: &RequestChannel,
    ) -> Result<Prepared, RpcError> {
        let input_responses: Option<Map<String, Value>> = member(p.input_responses)?;
        let request_state: Option<String> = member(p.request_state)?;
        let meta = p.meta.as_ref().ok_or_else(|| {
            invalid_meta(
                "_meta",
                format!("`_meta` with `{META_VERSION}` is required"),
            )
        })?;
        let meta = meta.read()?;
        let requested = meta.protocol_version.ok_or_else(|| {
            invalid_meta(META_VERSION, format!("`_meta` must carry `{META_VERSION}`"))
        })?;
        if meta.client_capabilities.is_none() {
            return Err(invalid_meta(
                META_CAPABILITIES,
                format!("`_meta` must carry `{META_CAPABILITIES}`"),
            ));
        }
        let Text(requested) = requested;
        if !STATELESS_VERSIONS.contains(&&*requested) {
            let mut supported: Vec<&str> = STATELESS_VERSIONS.to_vec();
            supported.extend(ProtocolVersion::HANDSHAKE.iter().rev().map(|v| v.as_str()));
            return Err(RpcError::new(
                crate::protocol::code::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version `{requested}`"),
            )
            .with_data(json!({ "supported": supported, "requested": requested })));
        }
        // A request stands alone: a session for it only, holding what its `_meta` says (the
        // one the transport made for it, when it made one).
        let session = if connection.is_one_request() {
            Arc::clone(connection)
        } else {
            Arc::new(connection.request_scoped(channel.out.clone()))
        };
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
            let mut answers = match &request_state {
                Some(sealed) => {
                    self.state_keys()
                        .open(sealed, binding.get())
                        .map_err(RpcError::invalid_params)?
                        .answers
                }
                None => Map::new(),
            };
            let retry = request_state.is_some() || input_responses.is_some();
            // What the state sealed stands: a fresh answer is taken only to a question the
            // state holds no answer to.
            for (key, answer) in input_responses.unwrap_or_default() {
                answers.entry(key).or_insert(answer);
            }
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
    fn a_repeated_key_is_found_among_many_others() {
        // Tens of thousands of keys of the protocol's namespace (a few megabytes, within the
        // body limit), one of them given again at the end.
        let mut meta = String::from("{");
        for i in 0..50_000 {
            meta.push_str(&format!(r#""io.modelcontextprotocol/k{i}":0,"#));
        }
        meta.push_str(r#""io.modelcontextprotocol/k777":1}"#);
        let params = format!(r#"{{"_meta":{meta}}}"#);
        let raw = RawValue::from_string(params).unwrap();
        let read = StatelessParams::read(Some(&raw)).unwrap();
        let error = read.meta.as_ref().unwrap().read().err().unwrap();
        assert_eq!(
            error.message,
            "`io.modelcontextprotocol/k777` is given twice in `_meta`"
        );
    }

    /// `tools/call`'s parameters taken from the reading are those a reading of the text
    /// gives, and whatever does not read plainly is left to that reading (and its refusal).
    #[test]
    fn call_parameters_from_the_reading_are_those_of_the_text() {
        let meta = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
        let cases = [
            (
                format!(r#"{{"name":"echo","arguments":{{"text":"hi"}},"_meta":{{{meta}}}}}"#),
                true,
            ),
            (
                format!(r#"{{"name":"e\u0063ho","_meta":{{{meta},"progressToken":7}}}}"#),
                true,
            ),
            (
                format!(
                    r#"{{"_meta":{{"progressToken":"p",{meta}}},"name":"echo","arguments":null}}"#
                ),
                true,
            ),
            (
                format!(r#"{{"name":"echo","_meta":{{{meta},"progressToken":null}}}}"#),
                true,
            ),
            (
                format!(r#"{{"name":"echo","_meta":{{{meta},"progressT\u006fken":"q"}}}}"#),
                true,
            ),
            (format!(r#"{{"name":7,"_meta":{{{meta}}}}}"#), false),
            (format!(r#"{{"name":null,"_meta":{{{meta}}}}}"#), false),
            (format!(r#"{{"_meta":{{{meta}}}}}"#), false),
            (
                format!(r#"{{"name":"echo","_meta":{{{meta},"progressToken":1.5}}}}"#),
                false,
            ),
            (
                format!(
                    r#"{{"name":"echo","_meta":{{{meta},"progressToken":1,"progressToken":2}}}}"#
                ),
                false,
            ),
            (
                format!(r#"{{"name":"echo","_meta":{{{meta},"progressToken":{{}}}}}}"#),
                false,
            ),
            (r#"{"name":"echo","_meta":[1]}"#.to_owned(), false),
            (r#"{"name":"echo"}"#.to_owned(), false),
        ];
        for (text, plain) in cases {
            let raw = RawValue::from_string(text.clone()).unwrap();
            let read = StatelessParams::read(Some(&raw)).unwrap();
            let fast = read.call_tool();
            let slow = parse_params::<CallToolParams<'_>>(Some(&raw));
            assert_eq!(fast.is_some(), plain, "{text}");
            // A parameter list that reads plainly reads the same from the text; one that
            // does not is either refused by the text's reading or read from it.
            if let Some(fast) = fast {
                let slow = slow.unwrap_or_else(|e| panic!("{text}: {}", e.message));
                assert_eq!(fast.name, slow.name, "{text}");
                assert_eq!(
                    fast.arguments.map(RawValue::get),
                    slow.arguments.map(RawValue::get),
                    "{text}"
                );
                assert_eq!(
                    fast.meta.map(|m| m.progress_token),
                    slow.meta.map(|m| m.progress_token),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn the_stateless_revision_is_found_in_the_meta() {
        assert!(may_name_a_revision(
            br#"{"name":"a/b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#
        ));
        assert!(!may_name_a_revision(
            br#"{"name":"tools/call","x":"io.modelcontextprotocol/other"}"#
        ));
        assert!(!may_name_a_revision(br#"/protocolVersion"#));
    }

    #[test]
    fn a_key_written_with_escapes_is_looked_for_by_reading_it() {
        for text in [
            br#"{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}"#.as_slice(),
            br#"{"_meta":{"io.modelcontextprotocol\u002fprotocolVersion":"2026-07-28"}}"#,
            br#"{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        ] {
            assert!(
                may_name_a_revision(text),
                "{}",
                String::from_utf8_lossy(text)
            );
            let raw: &RawValue = serde_json::from_slice(text).unwrap();
            assert!(in_meta(raw), "{}", raw.get());
        }
        // Escapes that write no character of the key leave the quick answer.
        assert!(!may_name_a_revision(br#"{"text":"a\nb \"c\" d\\e\t"}"#));
        // An escaped key in an argument is no member of `_meta`.
        let raw: &RawValue = serde_json::from_str(
            r#"{"arguments":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"},"_meta":{}}"#,
        )
        .unwrap();
        assert!(!in_meta(raw));
    }
}
