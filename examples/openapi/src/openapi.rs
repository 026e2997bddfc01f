//! Reading an OpenAPI 3 document: its servers, and its operations, each with the JSON Schema
//! of a tool's arguments made from the operation's parameters and JSON request body.

use hyper::Method;
use mcp_runtime::serde_json::{self, Map, Value, json};

/// The argument that carries an operation's request body.
pub const BODY: &str = "body";

/// An OpenAPI 3.0 or 3.1 document, written as JSON.
pub struct Document {
    root: Value,
}

/// Where a parameter's value goes in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Into its `{name}` in the path, percent-encoded as one segment.
    Path,
    /// Into the query string, percent-encoded.
    Query,
}

/// A piece of a path template such as `/pets/{petId}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text of the document's, sent as it is written.
    Literal(String),
    /// The value of the path parameter of this name.
    Parameter(String),
}

/// One operation of the API, a method on a path, served as one tool.
#[derive(Debug)]
pub struct Operation {
    /// The tool's name: the operation's `operationId`.
    pub name: String,
    /// The tool's description: the operation's summary and description.
    pub description: String,
    /// The HTTP method.
    pub method: Method,
    /// The path, as written in the document (`/pets/{petId}`), for messages.
    pub path: String,
    /// The path, split into literal text and parameters.
    pub pieces: Vec<Piece>,
    /// Every parameter, by name, with where it goes.
    pub parameters: Vec<(String, Location)>,
    /// Whether the operation takes a JSON request body, as the `body` argument.
    pub takes_body: bool,
    /// The JSON Schema of the tool's arguments.
    pub schema: Value,
}

/// The methods an OpenAPI path item may describe, in the order tools are listed.
const METHODS: [(&str, Method); 8] = [
    ("get", Method::GET),
    ("put", Method::PUT),
    ("post", Method::POST),
    ("delete", Method::DELETE),
    ("options", Method::OPTIONS),
    ("head", Method::HEAD),
    ("patch", Method::PATCH),
    ("trace", Method::TRACE),
];

impl Document {
    /// Reads a document; fails, saying why, on anything that is not OpenAPI 3 written as JSON.
    pub fn parse(text: &str) -> Result<Document, String> {
        let root: Value = serde_json::from_str(text).map_err(|e| {
            format!("it is not JSON ({e}); this example reads OpenAPI documents written as JSON: convert a YAML one first")
        })?;
        match root.get("openapi").and_then(Value::as_str) {
            Some(version) if version.starts_with("3.") => Ok(Document { root }),
            Some(version) => Err(format!(
                "it is OpenAPI {version}; this example reads OpenAPI 3.0 and 3.1 documents"
            )),
            None => Err(
                "it has no `openapi` field giving the version: is it an OpenAPI 3 document? (convert a Swagger 2.0 one first)"
                    .into(),
            ),
        }
    }

    /// The API's title (`info.title`).
    pub fn title(&self) -> Option<&str> {
        self.root.pointer("/info/title").and_then(Value::as_str)
    }

    /// What the API is for (`info.description`).
    pub fn description(&self) -> Option<&str> {
        self.root
            .pointer("/info/description")
            .and_then(Value::as_str)
    }

    /// The URL of the first server the document names, its `{variables}` given their
    /// defaults.
    pub fn server_url(&self) -> Option<String> {
        let server = self.root.pointer("/servers/0")?;
        let mut url = server.get("url")?.as_str()?.to_owned();
        if let Some(Value::Object(variables)) = server.get("variables") {
            for (name, variable) in variables {
                if let Some(default) = variable.get("default").and_then(Value::as_str) {
                    url = url.replace(&format!("{{{name}}}"), default);
                }
            }
        }
        Some(url)
    }

    /// Every operation of the document, and a sentence for each one left out and why (a
    /// reference to another file, a header parameter it requires, a body that is not JSON…).
    pub fn operations(&self) -> (Vec<Operation>, Vec<String>) {
        let (mut operations, mut left_out) = (Vec::new(), Vec::new());
        let Some(Value::Object(paths)) = self.root.get("paths") else {
            return (operations, left_out);
        };
        for (path, item) in paths {
            let item = match self.inline(item, &mut Vec::new()) {
                Ok(item) => item,
                Err(problem) => {
                    left_out.push(format!(
                        "the operations of `{path}` are left out: {problem}"
                    ));
                    continue;
                }
            };
            for (key, method) in &METHODS {
                let Some(operation) = item.get(*key) else {
                    continue;
                };
                match self.operation(path, method, &item, operation) {
                    Ok(operation)
                        if operations
                            .iter()
                            .any(|o: &Operation| o.name == operation.name) =>
                    {
                        left_out.push(format!(
                            "{method} {path} is left out: another operation is already named `{}`",
                            operation.name
                        ));
                    }
                    Ok(operation) => operations.push(operation),
                    Err(problem) => {
                        left_out.push(format!("{method} {path} is left out: {problem}"))
                    }
                }
            }
        }
        (operations, left_out)
    }

    /// The operation `method path`, whose path item (its `$ref`s inlined) is `item`.
    fn operation(
        &self,
        path: &str,
        method: &Method,
        item: &Value,
        operation: &Value,
    ) -> Result<Operation, String> {
        let name = match operation.get("operationId").and_then(Value::as_str) {
            Some(id) => tool_name(id),
            None => tool_name(&format!("{}{path}", method.as_str().to_lowercase())),
        };
        let pieces = pieces(path)?;
        let (mut properties, mut required, mut parameters) = (Map::new(), Vec::new(), Vec::new());

        // The path item's parameters apply to each of its operations, which may redefine one.
        let mut all: Vec<&Value> = Vec::new();
        for list in [item.get("parameters"), operation.get("parameters")] {
            for parameter in list.and_then(Value::as_array).into_iter().flatten() {
                let same =
                    |p: &&Value| p["name"] == parameter["name"] && p["in"] == parameter["in"];
                all.retain(|p| !same(p));
                all.push(parameter);
            }
        }
        for parameter in all {
            let name = parameter["name"]
                .as_str()
                .ok_or("a parameter has no `name`")?;
            let must = parameter["required"] == true;
            let location = match parameter["in"].as_str() {
                Some("path") => Location::Path,
                Some("query") => Location::Query,
                other if must => {
                    return Err(format!(
                        "it requires the {} parameter `{name}`, and this example sends only path and query parameters",
                        other.unwrap_or("(unplaced)")
                    ));
                }
                // An optional header or cookie: the tool does without it.
                _ => continue,
            };
            if name == BODY {
                return Err(format!(
                    "a parameter is named `{BODY}`, the name this example gives the request body"
                ));
            }
            if properties.contains_key(name) {
                return Err(format!(
                    "two of its parameters are named `{name}`, and a tool's arguments need names of their own"
                ));
            }
            let mut schema = match (parameter.get("schema"), parameter.get("content")) {
                (Some(schema), _) => json_schema(schema.clone()),
                (None, Some(_)) => {
                    return Err(format!(
                        "the parameter `{name}` is described by `content`, and this example reads only `schema`"
                    ));
                }
                (None, None) => json!({}),
            };
            describe(&mut schema, parameter.get("description"));
            properties.insert(name.to_owned(), schema);
            if must || location == Location::Path {
                required.push(name.to_owned());
            }
            parameters.push((name.to_owned(), location));
        }
        for piece in &pieces {
            if let Piece::Parameter(name) = piece
                && !parameters
                    .iter()
                    .any(|(p, l)| p == name && *l == Location::Path)
            {
                return Err(format!(
                    "its path names `{{{name}}}`, and no path parameter describes it"
                ));
            }
        }

        let mut takes_body = false;
        if let Some(body) = operation.get("requestBody") {
            let content = body.get("content").and_then(Value::as_object);
            let json = content
                .into_iter()
                .flatten()
                .find(|(media, _)| is_json(media));
            match json {
                Some((_, media)) => {
                    let mut schema = json_schema(media.get("schema").cloned().unwrap_or(json!({})));
                    describe(&mut schema, body.get("description"));
                    properties.insert(BODY.to_owned(), schema);
                    if body["required"] == true {
                        required.push(BODY.to_owned());
                    }
                    takes_body = true;
                }
                None if body["required"] == true => {
                    return Err(
                        "its request body is not JSON, the only kind this example sends".into(),
                    );
                }
                None => {}
            }
        }

        let text = |key: &str| operation.get(key).and_then(Value::as_str).map(str::trim);
        let description = match (text("summary"), text("description")) {
            (Some(summary), Some(more)) if !more.is_empty() => format!("{summary}\n\n{more}"),
            (Some(one), _) | (None, Some(one)) if !one.is_empty() => one.to_owned(),
            _ => format!("{method} {path}"),
        };
        let mut schema = json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        schema["additionalProperties"] = json!(false);
        Ok(Operation {
            name,
            description,
            method: method.clone(),
            path: path.to_owned(),
            pieces,
            parameters,
            takes_body,
            schema,
        })
    }

    /// `value` with every `$ref` replaced by a copy of what it points at, recursively. Only
    /// references within the document (`#/components/…`) are followed; a schema that refers
    /// to itself cannot be inlined and is refused. `seen` holds the references being inlined.
    fn inline(&self, value: &Value, seen: &mut Vec<String>) -> Result<Value, String> {
        match value {
            Value::Object(map) => {
                let Some(reference) = map.get("$ref") else {
                    let mut inlined = Map::new();
                    for (key, value) in map {
                        inlined.insert(key.clone(), self.inline(value, seen)?);
                    }
                    return Ok(Value::Object(inlined));
                };
                let reference = reference.as_str().ok_or("a `$ref` is not text")?;
                let pointer = reference
                    .strip_prefix('#')
                    .filter(|p| p.starts_with('/'))
                    .ok_or_else(|| {
                        format!("`{reference}` is not a reference within the document (`#/components/…`), and this example reads no other file")
                    })?;
                if seen.iter().any(|r| r == reference) {
                    return Err(format!(
                        "`{reference}` refers to itself ({} → {reference}), and a recursive schema cannot be inlined",
                        seen.join(" → ")
                    ));
                }
                let target = self
                    .root
                    .pointer(pointer)
                    .ok_or_else(|| format!("`{reference}` points at nothing in the document"))?;
                seen.push(reference.to_owned());
                let mut inlined = self.inline(target, seen)?;
                // OpenAPI 3.1 allows words beside a `$ref` (a `description` mostly): they win.
                if let Value::Object(inlined) = &mut inlined {
                    for (key, value) in map.iter().filter(|(key, _)| *key != "$ref") {
                        inlined.insert(key.clone(), self.inline(value, seen)?);
                    }
                }
                seen.pop();
                Ok(inlined)
            }
            Value::Array(items) => items
                .iter()
                .map(|item| self.inline(item, seen))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }
}

/// A tool name made of `text`: the characters MCP allows in one (letters, digits, `_`, `-`,
/// `.`), any other one becoming `_`.
fn tool_name(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' | '.' => c,
            _ => '_',
        })
        .take(128)
        .collect()
}

/// `/pets/{petId}` as literal text and parameters; a `{` without its `}` is refused.
fn pieces(path: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("its path `{path}` opens a `{{` it does not close"))?;
        if open > 0 {
            pieces.push(Piece::Literal(rest[..open].to_owned()));
        }
        pieces.push(Piece::Parameter(rest[open + 1..open + close].to_owned()));
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest.to_owned()));
    }
    Ok(pieces)
}

/// Whether a media type is JSON: `application/json`, or any `…/…+json`.
pub fn is_json(media: &str) -> bool {
    let essence = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

/// Gives `schema` the `description` of the parameter or body it describes, unless it has one.
fn describe(schema: &mut Value, description: Option<&Value>) {
    if let (Value::Object(schema), Some(Value::String(description))) = (schema, description) {
        schema
            .entry("description")
            .or_insert_with(|| Value::String(description.clone()));
    }
}

/// An OpenAPI schema (its `$ref`s inlined) as the JSON Schema of an argument: OpenAPI 3.0's
/// own words become JSON Schema's (`nullable`, a boolean `exclusiveMinimum`), words JSON
/// Schema does not have are dropped, and `readOnly` properties, which a request must not
/// send, are taken out and refused by name.
fn json_schema(mut schema: Value) -> Value {
    let Value::Object(map) = &mut schema else {
        return schema; // `true` or `false`
    };
    if map.remove("nullable") == Some(Value::Bool(true)) {
        match map.get_mut("type") {
            Some(Value::String(one)) => {
                let one = std::mem::take(one);
                map.insert("type".into(), json!([one, "null"]));
            }
            Some(Value::Array(types)) if !types.contains(&json!("null")) => {
                types.push(json!("null"))
            }
            _ => {}
        }
    }
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(exclusive)) = map.get(flag) {
            let exclusive = *exclusive;
            map.remove(flag);
            if exclusive && let Some(bound) = map.remove(bound) {
                map.insert(flag.into(), bound);
            }
        }
    }
    for word in ["discriminator", "xml", "externalDocs", "example"] {
        map.remove(word);
    }
    let read_only: Vec<String> = match map.get("properties") {
        Some(Value::Object(properties)) => properties
            .iter()
            .filter(|(_, p)| p["readOnly"] == true)
            .map(|(name, _)| name.clone())
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.retain(|name, _| !read_only.contains(name));
        for property in properties.values_mut() {
            *property = json_schema(std::mem::take(property));
        }
    }
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|name| {
            !name
                .as_str()
                .is_some_and(|n| read_only.iter().any(|r| r == n))
        });
    }
    for word in ["items", "additionalProperties", "not"] {
        if let Some(sub) = map.get_mut(word) {
            *sub = json_schema(std::mem::take(sub));
        }
    }
    if !read_only.is_empty() {
        // Left out of `properties`, a `readOnly` property could still be sent as one more
        // (an object allows others unless it says not): it is refused by name.
        let sent: Vec<Value> = read_only
            .iter()
            .map(|name| json!({"required": [name]}))
            .collect();
        let refused = json!({"not": {"anyOf": sent}});
        match map.get_mut("allOf") {
            Some(Value::Array(all)) => all.push(refused),
            _ => {
                map.insert("allOf".into(), json!([refused]));
            }
        }
    }
    for word in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(subs)) = map.get_mut(word) {
            for sub in subs {
                *sub = json_schema(std::mem::take(sub));
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(paths: Value, schemas: Value) -> Document {
        let text = json!({
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "paths": paths,
            "components": {"schemas": schemas},
        });
        Document::parse(&text.to_string()).unwrap()
    }

    #[test]
    fn the_petstore_makes_four_tools_with_their_schemas() {
        let petstore = Document::parse(include_str!("../petstore.json")).unwrap();
        assert_eq!(
            petstore.server_url().as_deref(),
            Some("http://127.0.0.1:8080/v1")
        );
        let (operations, left_out) = petstore.operations();
        assert!(left_out.is_empty(), "{left_out:?}");
        let names: Vec<_> = operations.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["listPets", "createPet", "getPet", "deletePet"]);
        let create = &operations[1];
        assert!(create.takes_body);
        assert_eq!(create.schema["required"], json!(["body"]));
        assert_eq!(
            create.schema["properties"]["body"]["properties"]["tag"]["type"],
            "string"
        );
        assert_eq!(
            operations[2].pieces,
            [
                Piece::Literal("/pets/".into()),
                Piece::Parameter("petId".into())
            ]
        );
    }

    #[test]
    fn references_to_themselves_or_elsewhere_leave_the_operation_out_saying_why() {
        let doc = document(
            json!({
                "/a": {"post": {"operationId": "a", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}},
                "/b": {"post": {"operationId": "b", "requestBody": {"content": {"application/json": {"schema": {"$ref": "other.json#/Thing"}}}}}},
                "/c/{id}": {"get": {"operationId": "c"}},
            }),
            json!({"Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}}}}),
        );
        let (operations, left_out) = doc.operations();
        assert!(operations.is_empty());
        assert!(left_out[0].contains("refers to itself"), "{left_out:?}");
        assert!(left_out[1].contains("reads no other file"), "{left_out:?}");
        assert!(
            left_out[2].contains("no path parameter describes it"),
            "{left_out:?}"
        );
    }

    #[test]
    fn openapi_3_0_words_become_json_schema_words() {
        let schema = json_schema(json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "readOnly": true},
                "age": {"type": "integer", "nullable": true, "minimum": 0, "exclusiveMinimum": true, "example": 3},
            },
            "required": ["id", "age"],
        }));
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"age": {"type": ["integer", "null"], "exclusiveMinimum": 0}},
                "required": ["age"],
                "allOf": [{"not": {"anyOf": [{"required": ["id"]}]}}],
            })
        );
    }
}
