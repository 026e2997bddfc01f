//! What tools return: content blocks, [`CallToolResult`], [`Json`], and the
//! [`IntoToolResult`] conversion that turns a function's return value into a result.

use std::fmt;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One block of content in a tool result or a message.
///
/// ```
/// use mcp_runtime::Content;
///
/// let c = Content::text("hello");
/// assert_eq!(serde_json::to_value(&c).unwrap(), serde_json::json!({"type": "text", "text": "hello"}));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text(Text),
    /// An image, base64-encoded.
    Image(Image),
    /// Audio, base64-encoded (2025-03-26 and later).
    Audio(Audio),
    /// A link to a resource the client may read (2025-06-18 and later).
    ResourceLink(ResourceLink),
    /// A resource's contents, embedded.
    Resource(EmbeddedResource),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(Text::new(text))
    }
}

/// Optional hints on a content block about its audience and importance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is for: `"user"`, `"assistant"`, or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When the content last changed, as an ISO 8601 timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The sender or recipient of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// A text content block.
///
/// ```
/// use mcp_runtime::Text;
/// assert_eq!(Text::new("hi").text, "hi");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Text {
    /// The text.
    pub text: String,
    /// Audience and priority hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Text {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

macro_rules! binary_content {
    ($(#[$doc:meta])* $name:ident, $example_ctor:ident, $example_mime:literal, $($ctor:ident => $mime:literal),*) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// The bytes, base64-encoded.
            pub data: String,
            /// The MIME type of the bytes.
            pub mime_type: String,
            /// Audience and priority hints.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub annotations: Option<Annotations>,
            /// Extra metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<Map<String, Value>>,
        }

        impl $name {
            /// Content from raw bytes and their MIME type; the bytes are base64-encoded here.
            pub fn new(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
                Self::from_base64(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                    mime_type,
                )
            }

            /// Content from bytes that are already base64-encoded.
            pub fn from_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
                $name {
                    data: data.into(),
                    mime_type: mime_type.into(),
                    annotations: None,
                    meta: None,
                }
            }

            $(
                #[doc = concat!("Content of MIME type `", $mime, "` from raw bytes.")]
                pub fn $ctor(bytes: impl AsRef<[u8]>) -> Self {
                    Self::new(bytes, $mime)
                }
            )*
        }

        impl From<$name> for Content {
            fn from(c: $name) -> Content {
                Content::$name(c)
            }
        }

        impl IntoToolResult for $name {
            fn into_tool_result(self) -> CallToolResult {
                CallToolResult::new(vec![Content::$name(self)])
            }
        }
    };
}

binary_content!(
    /// An image content block.
    ///
    /// ```
    /// use mcp_runtime::Image;
    /// let png = Image::png([0x89, b'P', b'N', b'G']);
    /// assert_eq!(png.mime_type, "image/png");
    /// assert_eq!(png.data, "iVBORw==");
    /// ```
    Image, png, "image/png",
    png => "image/png", jpeg => "image/jpeg", gif => "image/gif", webp => "image/webp"
);

binary_content!(
    /// An audio content block.
    ///
    /// ```
    /// use mcp_runtime::Audio;
    /// assert_eq!(Audio::wav(b"RIFF").mime_type, "audio/wav");
    /// ```
    Audio, wav, "audio/wav",
    wav => "audio/wav", mp3 => "audio/mpeg", ogg => "audio/ogg"
);

/// A link to a resource, which the client may read with `resources/read`.
///
/// ```
/// use mcp_runtime::ResourceLink;
/// let link = ResourceLink::new("file:///tmp/report.txt", "report");
/// assert_eq!(link.uri, "file:///tmp/report.txt");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// The resource's name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Audience and priority hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceLink {
    /// A link with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            meta: None,
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// The contents of a resource: text or base64 bytes, under a URI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents, base64-encoded.
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The bytes, base64-encoded.
        blob: String,
    },
}

/// A resource embedded in a tool result or a message.
///
/// ```
/// use mcp_runtime::EmbeddedResource;
/// let r = EmbeddedResource::text("memo://1", "text/plain", "remember the milk");
/// let json = serde_json::to_value(&r).unwrap();
/// assert_eq!(json["resource"]["text"], "remember the milk");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Audience and priority hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl EmbeddedResource {
    /// An embedded text resource.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        EmbeddedResource {
            resource: ResourceContents::Text {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: text.into(),
            },
            annotations: None,
            meta: None,
        }
    }

    /// An embedded binary resource; the bytes are base64-encoded here.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        EmbeddedResource {
            resource: ResourceContents::Blob {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            },
            annotations: None,
            meta: None,
        }
    }
}

impl From<Text> for Content {
    fn from(c: Text) -> Content {
        Content::Text(c)
    }
}

impl From<ResourceLink> for Content {
    fn from(c: ResourceLink) -> Content {
        Content::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for Content {
    fn from(c: EmbeddedResource) -> Content {
        Content::Resource(c)
    }
}

/// The full result of a tool call, for handlers that want complete control.
///
/// ```
/// use mcp_runtime::{CallToolResult, Content};
///
/// let r = CallToolResult::error("the city is unknown");
/// assert!(r.is_error);
/// let r = CallToolResult::new(vec![Content::text("a"), Content::text("b")]);
/// assert_eq!(r.content.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<Content>,
    /// Structured content matching the tool's `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed (a tool error, which the model sees, not a protocol error).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// A defect of the server (not of the call) found while building the result; it is
    /// answered as a JSON-RPC internal error instead.
    #[serde(skip)]
    pub(crate) internal_error: Option<String>,
}

impl CallToolResult {
    /// Appends the result as JSON, byte for byte as its `Serialize` writes it, with each
    /// text block's text written by [`write_json_string`](crate::protocol::write_json_string)
    /// (several times faster than serde_json's escaping, for texts of any length).
    pub(crate) fn write_json(&self, out: &mut String) {
        // Every field named: one added to either struct does not compile until it is
        // written here too.
        let CallToolResult {
            content,
            structured_content,
            is_error,
            meta,
            internal_error: _,
        } = self;
        out.push_str("{\"content\":[");
        for (i, block) in content.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match block {
                Content::Text(Text {
                    text,
                    annotations,
                    meta,
                }) => {
                    out.push_str("{\"type\":\"text\",\"text\":");
                    crate::protocol::write_json_string(out, text);
                    if let Some(annotations) = annotations {
                        out.push_str(",\"annotations\":");
                        push_json(out, annotations);
                    }
                    if let Some(meta) = meta {
                        out.push_str(",\"_meta\":");
                        push_json(out, meta);
                    }
                    out.push('}');
                }
                other => push_json(out, other),
            }
        }
        out.push(']');
        if let Some(structured) = structured_content {
            out.push_str(",\"structuredContent\":");
            push_json(out, structured);
        }
        if *is_error {
            out.push_str(",\"isError\":true");
        }
        if let Some(meta) = meta {
            out.push_str(",\"_meta\":");
            push_json(out, meta);
        }
        out.push('}');
    }

    /// About how many bytes the result takes serialised (its texts and encoded data, and
    /// room for the rest and for the response around it): a large text is then written
    /// once, not into a buffer that doubles its way up to it.
    pub(crate) fn size_hint(&self) -> usize {
        let blocks: usize = self
            .content
            .iter()
            .map(|block| match block {
                Content::Text(t) => t.text.len(),
                Content::Image(i) => i.data.len(),
                Content::Audio(a) => a.data.len(),
                Content::ResourceLink(_) | Content::Resource(_) => 0,
            } + 128)
            .sum();
        blocks.saturating_add(256)
    }

    /// A successful result with the given content.
    pub fn new(content: Vec<Content>) -> Self {
        CallToolResult {
            content,
            ..CallToolResult::default()
        }
    }

    /// A tool error carrying one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(message)],
            is_error: true,
            ..CallToolResult::default()
        }
    }

    /// A failure of the server rather than of the call: answered with a JSON-RPC internal
    /// error (-32603) instead of a result, so the client treats it as a protocol fault (a
    /// task of the tasks extension ends `failed`). Failures the model should read and act on
    /// are [`CallToolResult::error`].
    ///
    /// ```
    /// use mcp_runtime::CallToolResult;
    ///
    /// let r = CallToolResult::protocol_error("the database connection pool is closed");
    /// assert!(r.content.is_empty());
    /// ```
    pub fn protocol_error(message: impl Into<String>) -> Self {
        CallToolResult {
            internal_error: Some(message.into()),
            ..CallToolResult::default()
        }
    }

    /// A successful result carrying structured content (a text mirror is added when sent).
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            structured_content: Some(value),
            ..CallToolResult::default()
        }
    }
}

/// Structured tool output: the value is sent as `structuredContent`, its schema is the tool's
/// `outputSchema`, and a text block mirrors it for clients that read only text.
///
/// A type whose schema is not an object is wrapped as `{"result": …}` in both places, since the
/// specification requires object-shaped structured content.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// # #[serde(crate = "mcp_runtime::__private::serde")]
/// # #[schemars(crate = "mcp_runtime::__private::schemars")]
/// struct Forecast { celsius: f64 }
/// # use mcp_runtime::__private::{serde, schemars};
///
/// /// Tomorrow's forecast.
/// #[tool]
/// fn forecast(city: String) -> Json<Forecast> {
///     Json(Forecast { celsius: if city == "Oslo" { 4.0 } else { 21.0 } })
/// }
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// A tool failure that the model sees as `isError: true` with this message.
///
/// Any `std::error::Error` converts into it, so `?` works in tools returning
/// `Result<_, ToolError>`.
///
/// ```
/// use mcp_runtime::ToolError;
///
/// fn parse(s: &str) -> Result<i64, ToolError> {
///     Ok(s.parse::<i64>()?)
/// }
/// assert_eq!(parse("x").unwrap_err().to_string(), "invalid digit found in string");
/// assert_eq!(ToolError::new("no such city").to_string(), "no such city");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    message: String,
    meta: Option<Map<String, Value>>,
}

impl ToolError {
    /// An error with a message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            meta: None,
        }
    }

    /// Attaches machine-readable detail, sent as the result's `_meta`.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The tool result this error is.
    pub fn into_result(self) -> CallToolResult {
        CallToolResult {
            meta: self.meta,
            ..CallToolResult::error(self.message)
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        error_with_meta(&e).unwrap_or_else(|| ToolError::new(e.to_string()))
    }
}

/// The errors of this crate that carry machine-readable detail keep it as a tool error.
fn error_with_meta(e: &dyn std::any::Any) -> Option<ToolError> {
    if let Some(tool_error) = e.downcast_ref::<ToolError>() {
        return Some(tool_error.clone());
    }
    if let Some(refused) = e.downcast_ref::<crate::fence::PathRefused>() {
        return Some(ToolError::new(refused.to_string()).with_meta(refused.meta()));
    }
    let fence = e.downcast_ref::<crate::fence::FenceError>()?;
    let error = ToolError::new(fence.to_string());
    Some(match fence.meta() {
        Some(meta) => error.with_meta(meta),
        None => error,
    })
}

/// Conversion of a tool function's return value into a [`CallToolResult`].
///
/// Implemented for text (`String`, `&str`, `char`), numbers and `bool` (as text), `()` (no
/// content), [`Json<T>`] (structured output), the content types, `Vec<Content>`,
/// [`CallToolResult`], `Option<T>` and `Result<T, E: Display>` (whose `Err` is a tool error).
pub trait IntoToolResult {
    /// Converts the value.
    fn into_tool_result(self) -> CallToolResult;

    /// The JSON Schema of the structured output, when the type has one.
    fn output_schema() -> Option<Value> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

impl IntoToolResult for Text {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![Content::Text(self)])
    }
}

impl IntoToolResult for ResourceLink {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![Content::ResourceLink(self)])
    }
}

impl IntoToolResult for EmbeddedResource {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![Content::Resource(self)])
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(Vec::new())
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![Content::text(self)])
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![Content::text(self)])
    }
}

impl IntoToolResult for std::borrow::Cow<'_, str> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![Content::text(self)])
    }
}

macro_rules! as_text {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> CallToolResult {
                CallToolResult::new(vec![Content::text(self.to_string())])
            }
        }
    )*};
}

as_text!(
    bool, char, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);

/// `None` is a result without content. An `Option` declares no output schema, even around
/// a [`Json<T>`]: a client that holds a schema rejects a result without structured content,
/// which `None` is. `Some(Json(..))` still sends its structured content.
impl<T: IntoToolResult> IntoToolResult for Option<T> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Some(v) => v.into_tool_result(),
            None => CallToolResult::new(Vec::new()),
        }
    }
}

impl<T: IntoToolResult, E: fmt::Display + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => error_with_meta(&e)
                .unwrap_or_else(|| ToolError::new(e.to_string()))
                .into_result(),
        }
    }

    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
}

impl<T: Serialize + schemars::JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => CallToolResult::structured(value),
            Err(e) => CallToolResult {
                internal_error: Some(format!("the tool's result could not be serialised: {e}")),
                ..CallToolResult::default()
            },
        }
    }

    fn output_schema() -> Option<Value> {
        Some(crate::schema::schema_for::<T>())
    }
}

/// Appends a part of a result serde_json writes (strings, numbers and JSON values, which
/// always serialise).
fn push_json(out: &mut String, value: &impl Serialize) {
    match serde_json::to_string(value) {
        Ok(json) => out.push_str(&json),
        Err(_) => out.push_str("null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_is_written_byte_for_byte_as_it_serialises() {
        let annotated = Content::Text(Text {
            text: "line one\nline \"two\"\u{1}".into(),
            annotations: Some(Annotations {
                audience: Some(vec![Role::User]),
                priority: Some(0.5),
                last_modified: Some("2026-12-04T00:00:00Z".into()),
            }),
            meta: Some(json!({"k": "v\u{7f}"}).as_object().cloned().unwrap()),
        });
        let every_kind = vec![
            Content::text(""),
            Content::text("é€😀 \u{2028}\t\\"),
            annotated,
            Content::Image(Image::png([0x89, b'P', b'N', b'G'])),
            Content::Audio(Audio::new([1, 2, 3], "audio/wav")),
            Content::ResourceLink(ResourceLink::new("file:///a", "a").mime_type("text/plain")),
            Content::Resource(EmbeddedResource::text("file:///b", "text/plain", "b\"")),
            Content::text("x".repeat(10_000) + "\u{0}"),
        ];
        let mut results = vec![
            CallToolResult::default(),
            CallToolResult::new(vec![Content::text("one")]),
            CallToolResult::new(every_kind.clone()),
            CallToolResult::error("the city is \"unknown\""),
            CallToolResult::structured(json!({"a": [1, "two\n", null]})),
        ];
        let mut everything = CallToolResult::new(every_kind);
        everything.structured_content = Some(json!({"n": 1.5}));
        everything.is_error = true;
        everything.meta = json!({"m": {"deep": ["\""]}}).as_object().cloned();
        results.push(everything);
        for result in results {
            let mut written = String::new();
            result.write_json(&mut written);
            assert_eq!(written, serde_json::to_string(&result).unwrap());
        }
    }

    #[test]
    fn numbers_and_bools_become_text() {
        assert_eq!(42i64.into_tool_result().content, vec![Content::text("42")]);
        assert_eq!(true.into_tool_result().content, vec![Content::text("true")]);
        assert_eq!(
            1.5f64.into_tool_result().content,
            vec![Content::text("1.5")]
        );
    }

    #[test]
    fn unit_is_empty_content() {
        let r = ().into_tool_result();
        assert_eq!(serde_json::to_value(r).unwrap(), json!({"content": []}));
    }

    #[test]
    fn err_is_a_tool_error_with_the_message() {
        let r: Result<String, String> = Err("boom".into());
        let r = r.into_tool_result();
        assert!(r.is_error);
        assert_eq!(r.content, vec![Content::text("boom")]);
    }

    #[test]
    fn content_blocks_serialise_with_their_type_tags() {
        let v = serde_json::to_value(vec![
            Content::from(Image::png([1, 2, 3])),
            Content::from(Audio::wav([1])),
            Content::from(ResourceLink::new("a://b", "b")),
            Content::from(EmbeddedResource::blob("a://c", "x/y", [0])),
        ])
        .unwrap();
        assert_eq!(
            v,
            json!([
                {"type": "image", "data": "AQID", "mimeType": "image/png"},
                {"type": "audio", "data": "AQ==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "a://b", "name": "b"},
                {"type": "resource", "resource": {"uri": "a://c", "mimeType": "x/y", "blob": "AA=="}}
            ])
        );
    }
}
