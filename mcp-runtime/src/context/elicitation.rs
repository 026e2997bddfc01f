//! `ctx.elicit::<T>(…)`: asking the user for structured input through the client
//! (`elicitation/create`), in form mode with a schema derived from `T`, or in URL mode.

use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Context;
use super::client::{ClientError, read_answer};

/// The user's answer to an elicitation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user submitted the form (or opened the URL, for URL mode).
    Accept(T),
    /// The user explicitly said no.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(v) => Some(v),
            _ => None,
        }
    }
}

/// The action of an elicitation result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationAction {
    /// Submitted.
    Accept,
    /// Refused.
    Decline,
    /// Dismissed.
    Cancel,
}

#[derive(Deserialize)]
struct ElicitResult {
    action: ElicitationAction,
    #[serde(default)]
    content: Option<Value>,
}

impl Context {
    /// Asks the user to fill in a form whose fields are those of `T` (a struct of strings,
    /// numbers, booleans and enums, as the specification allows), and returns what they
    /// answered. Needs the client's `elicitation` capability.
    ///
    /// Field doc comments become the fields' descriptions, `#[serde(default)]` values their
    /// defaults (SEP-1034), unit enums single-select lists, `Vec` of a unit enum multi-select
    /// lists, and an enum variant's doc comment its title (SEP-1330).
    ///
    /// ```
    /// use mcp_runtime::prelude::*;
    /// use mcp_runtime::{Elicitation, schemars, serde};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// #[serde(crate = "mcp_runtime::serde")]
    /// #[schemars(crate = "mcp_runtime::schemars")]
    /// struct Confirm {
    ///     /// Type the file's name to confirm.
    ///     name: String,
    /// }
    ///
    /// /// Delete a file after the user confirms.
    /// #[tool(annotations(destructive))]
    /// async fn delete(ctx: Context, name: String) -> Result<String, ToolError> {
    ///     match ctx.elicit::<Confirm>(format!("Delete {name}?")).await? {
    ///         Elicitation::Accept(c) if c.name == name => Ok(format!("deleted {name}")),
    ///         Elicitation::Accept(_) => Err(ToolError::new("the name did not match")),
    ///         Elicitation::Decline | Elicitation::Cancel => Ok("kept".into()),
    ///     }
    /// }
    /// # fn main() {}
    /// ```
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ClientError> {
        self.elicit_with_timeout(message, None).await
    }

    /// Like [`Context::elicit`], waiting at most `timeout` for the user.
    pub async fn elicit_with_timeout<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
        timeout: Option<Duration>,
    ) -> Result<Elicitation<T>, ClientError> {
        self.require(&["elicitation"], "elicitation")?;
        let schema = requested_schema::<T>().map_err(ClientError::InvalidRequest)?;
        let mut params = json!({ "message": message.into(), "requestedSchema": schema });
        if self.protocol_version().is_some_and(|v| v.has_icons()) {
            params["mode"] = "form".into();
        }
        let answer = self
            .request_client("elicitation/create", &params, timeout)
            .await?;
        let result: ElicitResult = read_answer("elicitation/create", answer)?;
        Ok(match result.action {
            ElicitationAction::Accept => {
                let content = result.content.unwrap_or_else(|| Value::Object(Map::new()));
                Elicitation::Accept(read_answer("elicitation/create", content)?)
            }
            ElicitationAction::Decline => Elicitation::Decline,
            ElicitationAction::Cancel => Elicitation::Cancel,
        })
    }

    /// Asks the user to open `url` (2025-11-25 URL mode, e.g. for a sign-in the server must
    /// not see) and returns whether they agreed. Needs the client's `elicitation.url`
    /// capability. `elicitation_id` identifies this request in a later
    /// `notifications/elicitation/complete`.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<ElicitationAction, ClientError> {
        self.require(&["elicitation", "url"], "elicitation.url")?;
        let params = json!({
            "mode": "url",
            "message": message.into(),
            "url": url.into(),
            "elicitationId": elicitation_id.into(),
        });
        let answer = self
            .request_client("elicitation/create", &params, None)
            .await?;
        let result: ElicitResult = read_answer("elicitation/create", answer)?;
        Ok(result.action)
    }
}

/// The `requestedSchema` of a form for `T`: a flat object of primitive fields, in the shapes
/// the specification's `PrimitiveSchemaDefinition` allows.
pub(crate) fn requested_schema<T: JsonSchema>() -> Result<Value, String> {
    let schema = crate::schema::input_schema_for::<T>();
    let type_name = T::schema_name();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .filter(|_| schema.get("type").and_then(Value::as_str) == Some("object"))
        .ok_or_else(|| {
            format!("an elicitation form must be a struct with named fields; `{type_name}` is not")
        })?;
    let mut fields = Map::new();
    for (name, field) in properties {
        let field = primitive_field(field)
            .map_err(|kind| format!("field `{name}` of `{type_name}` is {kind}; an elicitation form holds only strings, numbers, booleans and enums"))?;
        fields.insert(name.clone(), field);
    }
    let mut out = json!({ "type": "object", "properties": fields });
    if let Some(required) = schema.get("required") {
        out["required"] = required.clone();
    }
    Ok(out)
}

/// One field as a `PrimitiveSchemaDefinition`, or what kind of thing it is instead.
fn primitive_field(field: &Value) -> Result<Value, String> {
    let field = non_null(field);
    let mut out = Map::new();
    copy(field, &mut out, &["title", "description", "default"]);
    if let Some(variants) = titled_variants(field) {
        out.insert("type".into(), "string".into());
        out.insert("oneOf".into(), variants);
        return Ok(Value::Object(out));
    }
    match primitive_type(field).as_deref() {
        Some("string") => {
            out.insert("type".into(), "string".into());
            // `enumNames` is the titled single-select of 2025-06-18 (still accepted).
            copy(
                field,
                &mut out,
                &["enum", "enumNames", "minLength", "maxLength"],
            );
            if let Some(format) = field.get("format").and_then(Value::as_str)
                && ["email", "uri", "date", "date-time"].contains(&format)
            {
                out.insert("format".into(), format.into());
            }
        }
        Some(kind @ ("integer" | "number")) => {
            out.insert("type".into(), kind.into());
            copy(field, &mut out, &["minimum", "maximum"]);
        }
        Some("boolean") => {
            out.insert("type".into(), "boolean".into());
        }
        Some("array") => {
            let items = field
                .get("items")
                .map(non_null)
                .ok_or("an array of anything")?;
            out.insert("type".into(), "array".into());
            copy(field, &mut out, &["minItems", "maxItems"]);
            let items = if let Some(variants) = titled_variants(items) {
                json!({ "anyOf": variants })
            } else if primitive_type(items).as_deref() == Some("string")
                && items.get("enum").is_some()
            {
                json!({ "type": "string", "enum": items["enum"] })
            } else {
                return Err("a list of something other than enum values".into());
            };
            out.insert("items".into(), items);
        }
        Some("object") => return Err("a nested object".into()),
        _ => return Err("of a kind JSON Schema cannot name simply".into()),
    }
    Ok(Value::Object(out))
}

/// `{"type": ["string", "null"]}` and `anyOf: [X, {"type": "null"}]` (an `Option`) read as X.
fn non_null(field: &Value) -> &Value {
    if let Some(options) = field.get("anyOf").and_then(Value::as_array) {
        let real: Vec<&Value> = options
            .iter()
            .filter(|o| o.get("type") != Some(&json!("null")))
            .collect();
        if real.len() == 1 {
            return real[0];
        }
    }
    field
}

fn primitive_type(field: &Value) -> Option<String> {
    match field.get("type")? {
        Value::String(t) => Some(t.clone()),
        Value::Array(types) => {
            let real: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (real.len() == 1).then(|| real[0].to_owned())
        }
        _ => None,
    }
}

/// An enum whose variants carry titles (doc comments): schemars writes `oneOf` of
/// `{"const": …, "description": …}`; the specification wants `{"const": …, "title": …}`.
fn titled_variants(field: &Value) -> Option<Value> {
    let variants = field.get("oneOf")?.as_array()?;
    let titled: Option<Vec<Value>> = variants
        .iter()
        .map(|v| {
            let constant = v
                .get("const")
                .or_else(|| {
                    v.get("enum")
                        .and_then(|e| e.as_array())
                        .filter(|e| e.len() == 1)
                        .map(|e| &e[0])
                })?
                .as_str()?;
            let title = v
                .get("title")
                .or_else(|| v.get("description"))
                .and_then(Value::as_str)
                .unwrap_or(constant);
            Some(json!({ "const": constant, "title": title }))
        })
        .collect();
    titled.map(Value::Array)
}

fn copy(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key) {
            to.insert((*key).into(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Size {
        Small,
        Large,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Tier {
        /// Free of charge
        Free,
        /// Paid monthly
        Pro,
    }

    fn default_count() -> u32 {
        3
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Form {
        /// Your name.
        name: String,
        #[schemars(email)]
        email: Option<String>,
        #[serde(default = "default_count")]
        count: u32,
        #[serde(default)]
        subscribe: bool,
        size: Size,
        tier: Tier,
        sizes: Vec<Size>,
        tiers: Vec<Tier>,
    }

    #[test]
    fn a_flat_struct_becomes_a_form_of_primitives() {
        let s = requested_schema::<Form>().unwrap();
        let p = &s["properties"];
        assert_eq!(
            p["name"],
            json!({"type": "string", "description": "Your name."})
        );
        assert_eq!(p["email"], json!({"type": "string", "format": "email"}));
        assert_eq!(p["count"]["type"], "integer");
        assert_eq!(p["count"]["default"], 3);
        assert_eq!(p["subscribe"], json!({"type": "boolean", "default": false}));
        assert_eq!(
            p["size"],
            json!({"type": "string", "enum": ["Small", "Large"]})
        );
        assert_eq!(
            p["tier"]["oneOf"],
            json!([{"const": "Free", "title": "Free of charge"}, {"const": "Pro", "title": "Paid monthly"}])
        );
        assert_eq!(
            p["sizes"]["items"],
            json!({"type": "string", "enum": ["Small", "Large"]})
        );
        assert_eq!(
            p["tiers"]["items"]["anyOf"][1],
            json!({"const": "Pro", "title": "Paid monthly"})
        );
        assert_eq!(
            s["required"],
            json!(["name", "size", "tier", "sizes", "tiers"])
        );
    }

    #[test]
    fn nested_objects_are_refused_naming_the_field() {
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Inner {
            x: u8,
        }
        #[derive(Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Outer {
            inner: Inner,
        }
        let e = requested_schema::<Outer>().unwrap_err();
        assert!(
            e.contains("field `inner`") && e.contains("nested object"),
            "{e}"
        );
        assert!(requested_schema::<String>().is_err());
    }
}
