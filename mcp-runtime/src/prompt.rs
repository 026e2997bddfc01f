//! What prompts return: messages, [`GetPromptResult`], and the [`IntoPromptResult`]
//! conversion; and how prompt arguments, which travel as strings, become typed parameters.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{Content, Role};
use crate::protocol::RpcError;

/// One message of a prompt.
///
/// ```
/// use mcp_runtime::{PromptMessage, Role};
///
/// let m = PromptMessage::user("Review this diff.");
/// assert_eq!(m.role, Role::User);
/// let m = PromptMessage::assistant("Sure: which branch?");
/// assert_eq!(serde_json::to_value(&m).unwrap()["content"]["type"], "text");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks: the user or the assistant.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message with any content.
    pub fn new(role: Role, content: impl Into<Content>) -> Self {
        PromptMessage {
            role,
            content: content.into(),
        }
    }

    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage::new(Role::User, Content::text(text))
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Self {
        PromptMessage::new(Role::Assistant, Content::text(text))
    }
}

/// The full result of `prompts/get`.
///
/// ```
/// use mcp_runtime::{GetPromptResult, PromptMessage};
///
/// let r = GetPromptResult::new(vec![PromptMessage::user("hi")]).description("A greeting");
/// assert_eq!(r.description.as_deref(), Some("A greeting"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// A description of this instance of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            messages,
            ..GetPromptResult::default()
        }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// Conversion of a prompt function's return value into a [`GetPromptResult`].
///
/// Implemented for text (one user message), [`PromptMessage`], `Vec<PromptMessage>`,
/// [`GetPromptResult`], and `Result<T, E: Display>`, whose `Err` is a JSON-RPC error: the
/// [`RpcError`] itself when `E` is one, else an internal error (`-32603`) with the message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid prompt return type",
    label = "this type does not implement `IntoPromptResult`",
    note = "return a `String`, a `PromptMessage`, a `Vec<PromptMessage>`, a `GetPromptResult`, or a `Result` of one of these"
)]
pub trait IntoPromptResult {
    /// Converts the value.
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(self)
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(self)]))
    }
}

impl IntoPromptResult for &str {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(self)]))
    }
}

impl<T: IntoPromptResult, E: fmt::Display + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, RpcError> {
        self.map_err(handler_error)?.into_prompt_result()
    }
}

/// The JSON-RPC error for a handler's `Err`: an [`RpcError`] as it is, anything else as an
/// internal error carrying its message.
pub(crate) fn handler_error<E: fmt::Display + 'static>(e: E) -> RpcError {
    match (&e as &dyn std::any::Any).downcast_ref::<RpcError>() {
        Some(rpc) => rpc.clone(),
        None => RpcError::internal(e.to_string()),
    }
}

/// The string arguments of a `prompts/get` (or the variables of a resource URI), read into
/// typed parameters by the generated code.
#[derive(Debug, Default)]
pub struct PromptArguments {
    /// Each argument's text; `None` for one given as `null`.
    values: HashMap<String, Option<String>>,
}

impl PromptArguments {
    pub(crate) fn new(values: HashMap<String, String>) -> Self {
        PromptArguments {
            values: values.into_iter().map(|(k, v)| (k, Some(v))).collect(),
        }
    }

    /// The `arguments` of a `prompts/get` as the client sent them (an object, its text), as
    /// [`from_json`](Self::from_json) reads them; an argument named twice is `-32602` naming
    /// it, as it is among a tool's arguments: a gateway or policy that read the other value
    /// would have seen another prompt than the one made.
    pub(crate) fn from_text(text: Option<&str>) -> Result<Self, RpcError> {
        let Some(text) = text else {
            return Ok(PromptArguments::default());
        };
        if let Some((_, name)) = crate::registry::repeated_key(text)
            .ok()
            .flatten()
            .filter(|(path, _)| path == ".")
        {
            return Err(RpcError::invalid_params(format!(
                "invalid arguments: the argument `{name}` is given twice"
            )));
        }
        let values = serde_json::from_str(text).map_err(|e| {
            RpcError::invalid_params(format!("invalid arguments: not an object of texts ({e})"))
        })?;
        Self::from_json(values)
    }

    /// The `arguments` of a `prompts/get` as the client sent them: text, or `null` for an
    /// argument left out (as some clients send every argument they show). Anything else is
    /// `-32602` naming the argument.
    pub(crate) fn from_json(values: Map<String, Value>) -> Result<Self, RpcError> {
        let values = values
            .into_iter()
            .map(|(name, value)| match value {
                Value::String(text) => Ok((name, Some(text))),
                Value::Null => Ok((name, None)),
                other => Err(RpcError::invalid_params(format!(
                    "invalid argument `{name}`: prompt arguments are text, so give it as a string, not {}",
                    kind_of(&other)
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(PromptArguments { values })
    }

    /// The names of the arguments given with text (not `null`, not empty).
    pub fn given(&self) -> impl Iterator<Item = &str> {
        self.values
            .iter()
            .filter(|(_, v)| v.as_deref().is_some_and(|t| !t.is_empty()))
            .map(|(k, _)| k.as_str())
    }

    /// Each argument given with text, and its text.
    #[cfg(feature = "client")]
    pub(crate) fn values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .iter()
            .filter_map(|(k, v)| v.as_deref().map(|v| (k.as_str(), v)))
    }

    /// Every name the client sent, given or left out.
    #[cfg(feature = "dynamic")]
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// A required argument, parsed with `FromStr`; missing or unparsable is `-32602` naming it.
    pub fn required<T: FromStr<Err: fmt::Display>>(&self, name: &str) -> Result<T, RpcError> {
        self.required_with(name, str::parse)
    }

    /// An optional argument, parsed with `FromStr`; unparsable is `-32602` naming it. An
    /// empty text or `null` is the argument left out: clients send `""` for a field their
    /// user left blank.
    pub fn optional<T: FromStr<Err: fmt::Display>>(
        &self,
        name: &str,
    ) -> Result<Option<T>, RpcError> {
        self.optional_with(name, str::parse)
    }

    /// A required argument, parsed with `parse`.
    pub(crate) fn required_with<T, E: fmt::Display>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, RpcError> {
        match self.values.get(name) {
            Some(Some(raw)) => parse_argument(name, raw, parse),
            Some(None) => Err(RpcError::invalid_params(format!(
                "missing required argument `{name}`: it was given as null; give it as text"
            ))),
            None => Err(RpcError::invalid_params(format!(
                "missing required argument `{name}`"
            ))),
        }
    }

    /// An optional argument, parsed with `parse`.
    pub(crate) fn optional_with<T, E: fmt::Display>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Option<T>, RpcError> {
        match self.values.get(name) {
            Some(Some(raw)) if !raw.is_empty() => parse_argument(name, raw, parse).map(Some),
            _ => Ok(None),
        }
    }
}

fn parse_argument<T, E: fmt::Display>(
    name: &str,
    raw: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, RpcError> {
    parse(raw).map_err(|e| {
        RpcError::invalid_params(format!("invalid argument `{name}`: {e} (got {raw:?})"))
    })
}

/// A JSON value's kind, for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pairs: &[(&str, &str)]) -> PromptArguments {
        PromptArguments::new(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn missing_and_unparsable_arguments_are_invalid_params_naming_them() {
        let a = args(&[("n", "x")]);
        let e = a.required::<u32>("n").unwrap_err();
        assert_eq!(e.code, -32602);
        assert!(e.message.contains("`n`"), "{}", e.message);
        let e = a.required::<String>("m").unwrap_err();
        assert!(e.message.contains("missing required argument `m`"));
        assert_eq!(a.optional::<String>("m").unwrap(), None);
    }

    #[test]
    fn a_null_argument_is_left_out_and_a_required_one_is_named() {
        let a = PromptArguments::from_json(
            serde_json::json!({"day": null})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        assert_eq!(a.optional::<String>("day").unwrap(), None);
        let e = a.required::<String>("day").unwrap_err();
        assert_eq!(e.code, -32602);
        assert_eq!(
            e.message,
            "missing required argument `day`: it was given as null; give it as text"
        );
    }

    #[test]
    fn an_argument_that_is_not_text_is_refused_naming_it() {
        let e = PromptArguments::from_json(
            serde_json::json!({"count": 3}).as_object().unwrap().clone(),
        )
        .unwrap_err();
        assert_eq!(e.code, -32602);
        assert_eq!(
            e.message,
            "invalid argument `count`: prompt arguments are text, so give it as a string, not a number"
        );
    }

    #[test]
    fn an_empty_optional_argument_is_left_out() {
        let a = args(&[("day", ""), ("n", "")]);
        assert_eq!(a.optional::<u32>("day").unwrap(), None);
        assert_eq!(a.required::<String>("n").unwrap(), "");
    }

    #[test]
    fn an_rpc_error_from_a_handler_keeps_its_code() {
        let r: Result<String, RpcError> = Err(RpcError::new(-32002, "gone"));
        assert_eq!(r.into_prompt_result().unwrap_err().code, -32002);
        let r: Result<String, String> = Err("boom".into());
        assert_eq!(r.into_prompt_result().unwrap_err().code, -32603);
    }
}
