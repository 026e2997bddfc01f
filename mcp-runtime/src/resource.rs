//! What resources return: contents (text or bytes), listing entries, and the
//! [`IntoResourceContents`] conversion.

use std::fmt;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{Annotations, Json, ResourceContents};
use crate::prompt::handler_error;
use crate::protocol::RpcError;

/// Binary resource contents; sent base64-encoded as `blob`.
///
/// ```
/// use mcp_runtime::{Blob, IntoResourceContents, ResourceContents};
///
/// let contents = Blob(vec![0, 1, 2]).into_contents("bin://x", Some("application/octet-stream")).unwrap();
/// assert!(matches!(&contents[0], ResourceContents::Blob { blob, .. } if blob == "AAEC"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// One entry of `resources/list`, as a template's `list` function returns them.
///
/// ```
/// use mcp_runtime::Resource;
///
/// let r = Resource::new("sqlite://tables/users/ddl", "users").mime_type("text/x-sql");
/// assert_eq!(serde_json::to_value(&r).unwrap()["mimeType"], "text/x-sql");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The concrete URI.
    pub uri: String,
    /// A name for it.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Audience, priority and last-modified hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Resource {
    /// An entry with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
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

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
        }
    }

    /// Binary contents; the bytes are base64-encoded here.
    pub fn blob(uri: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: None,
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime: impl Into<String>) -> Self {
        match &mut self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                *mime_type = Some(mime.into());
            }
        }
        self
    }

    pub(crate) fn mime_type_or(self, mime: Option<&str>) -> Self {
        match (&self, mime) {
            (
                ResourceContents::Text {
                    mime_type: None, ..
                }
                | ResourceContents::Blob {
                    mime_type: None, ..
                },
                Some(mime),
            ) => self.with_mime_type(mime),
            _ => self,
        }
    }
}

/// An error for `resources/read` handlers: the resource does not exist (`-32002`, with the
/// URI in `data`), as the specification defines for handshake-era revisions.
///
/// ```
/// use mcp_runtime::resource_not_found;
///
/// let e = resource_not_found("db://tables/nope/ddl");
/// assert_eq!(e.code, -32002);
/// assert_eq!(e.data.unwrap()["uri"], "db://tables/nope/ddl");
/// ```
pub fn resource_not_found(uri: &str) -> RpcError {
    RpcError::new(
        crate::protocol::code::RESOURCE_NOT_FOUND,
        "resource not found",
    )
    .with_data(serde_json::json!({ "uri": uri }))
}

/// Conversion of a resource function's return value into the contents of `resources/read`.
///
/// `uri` is the URI that was read (echoed in every contents that does not name its own) and
/// `mime_type` the resource's declared MIME type. Implemented for text (`String`, `&str`),
/// bytes (`Vec<u8>`, [`Blob`]), [`Json<T>`] (as `application/json` text),
/// [`ResourceContents`], `Vec<ResourceContents>`, and `Result<T, E: Display>`, whose `Err`
/// is a JSON-RPC error: the [`RpcError`] itself when `E` is one (see
/// [`resource_not_found`]), else an internal error with the message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid resource return type",
    label = "this type does not implement `IntoResourceContents`",
    note = "return a `String`, bytes (`Vec<u8>` or `Blob`), `Json<T>`, `ResourceContents`, a `Vec<ResourceContents>`, or a `Result` of one of these"
)]
pub trait IntoResourceContents {
    /// The MIME type every value of this type reads as when the resource declares none
    /// (`application/json` for [`Json<T>`]); it is listed in `resources/list` too.
    const MIME_TYPE: Option<&'static str> = None;

    /// Converts the value.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError>;
}

impl IntoResourceContents for String {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![
            ResourceContents::text(uri, self).mime_type_or(mime_type),
        ])
    }
}

impl IntoResourceContents for &str {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        Blob(self).into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![
            ResourceContents::blob(uri, self.0).mime_type_or(mime_type),
        ])
    }
}

impl<T: Serialize> IntoResourceContents for Json<T> {
    const MIME_TYPE: Option<&'static str> = Some("application/json");

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        let text = serde_json::to_string(&self.0).map_err(|e| {
            RpcError::internal(format!("the resource could not be serialised: {e}"))
        })?;
        Ok(vec![ResourceContents::text(uri, text).mime_type_or(Some(
            mime_type.unwrap_or("application/json"),
        ))])
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(
        self,
        _uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![self.mime_type_or(mime_type)])
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(
        self,
        _uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(self
            .into_iter()
            .map(|c| c.mime_type_or(mime_type))
            .collect())
    }
}

impl<T: IntoResourceContents, E: fmt::Display + 'static> IntoResourceContents for Result<T, E> {
    const MIME_TYPE: Option<&'static str> = T::MIME_TYPE;

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        self.map_err(handler_error)?.into_contents(uri, mime_type)
    }
}

/// Conversion of a template's `list` function's return value into listing entries:
/// `Vec<Resource>` or `Result<Vec<Resource>, E: Display>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid return type for a resource `list` function",
    note = "return `Vec<Resource>` or `Result<Vec<Resource>, E>`"
)]
pub trait IntoResourceList {
    /// Converts the value.
    fn into_resource_list(self) -> Result<Vec<Resource>, RpcError>;
}

impl IntoResourceList for Vec<Resource> {
    fn into_resource_list(self) -> Result<Vec<Resource>, RpcError> {
        Ok(self)
    }
}

impl<E: fmt::Display + 'static> IntoResourceList for Result<Vec<Resource>, E> {
    fn into_resource_list(self) -> Result<Vec<Resource>, RpcError> {
        self.map_err(handler_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_echoes_the_uri_and_the_declared_mime_type() {
        let c = "select 1"
            .into_contents("db://q", Some("text/x-sql"))
            .unwrap();
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::json!([{"uri": "db://q", "mimeType": "text/x-sql", "text": "select 1"}])
        );
    }

    #[test]
    fn an_err_is_an_rpc_error() {
        let r: Result<String, RpcError> = Err(resource_not_found("x://y"));
        assert_eq!(r.into_contents("x://y", None).unwrap_err().code, -32002);
    }
}
