//! The arguments of a `tools/call`: read straight from the message into the tool's own type,
//! with every failure a tool error that names the argument at fault, so a model can correct
//! itself.
//!
//! Three rules go beyond what serde does by itself:
//! - the arguments are an object (`"arguments": []` is refused as such, not as a mismatch
//!   with a struct the user never wrote);
//! - a property given as `null` that its field refuses is read as not given (clients in
//!   OpenAI's strict mode send `null` for every optional property they leave out);
//! - a name the type does not know is refused, naming the closest known one, wherever serde
//!   would have dropped it silently — unless the tool's input schema opens that object to other
//!   properties (a flattened map, or `additionalProperties` that is not `false`). serde reports
//!   what it skips as it reads (through `serde_ignored`, which copies each key it reads; a
//!   `#[tool]` function's own parameter names are matched by the runtime, which copies only
//!   a name it does not know), so the arguments are read once unless a name is unknown; what
//!   serde reads from a buffered copy (a `#[serde(flatten)]` field, an internally tagged or
//!   untagged enum) it skips without a word, and is not checked.

use std::marker::PhantomData;

use serde::de::{DeserializeOwned, DeserializeSeed};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::fields::{ArgumentFields, FieldsSeed, Skipped};
use crate::content::CallToolResult;

/// The raw `arguments` of a `tools/call`, borrowed from the message, deserialised by the
/// tool's shim into its own type before its call begins.
pub struct Arguments<'a> {
    raw: Option<&'a RawValue>,
    /// The tool's input schema, which says where other properties are welcome and which names
    /// a misspelt one was meant to be.
    schema: Option<&'a Value>,
}

impl<'a> Arguments<'a> {
    pub(crate) fn new(raw: Option<&'a RawValue>) -> Self {
        Arguments { raw, schema: None }
    }

    /// The arguments of a call of the tool whose input schema is `schema`.
    pub(crate) fn with_schema(mut self, schema: &'a Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Deserialises the arguments; on failure, the tool error naming the offending field.
    ///
    /// A property given as `null` that its field refuses (a `#[serde(default)]` field that is
    /// not an `Option`) is read as not given, and a property the type does not know is an
    /// error naming it, unless the input schema allows other properties there.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, CallToolResult> {
        self.read(PhantomData::<T>)
    }

    /// Deserialises the arguments of a tool's parameters, named `names` in order, into a
    /// tree of their values (`ArgumentFields`), as [`parse`](Self::parse) reads a struct.
    /// What `#[tool]` generates calls it; not an API of its own.
    ///
    /// The reader is the same for every tool whose parameters have the same types, and none
    /// of its types is the user's: a crate of tools compiles it once per list of types, and
    /// an edit that moves a tool's code leaves it as it was.
    #[doc(hidden)]
    pub fn parse_fields<F: ArgumentFields>(
        &self,
        names: &'static [&'static str],
    ) -> Result<F, CallToolResult> {
        self.read(FieldsSeed::<F>::new(names))
    }

    /// Reads the arguments through `seed`, as [`parse`](Self::parse) says.
    fn read<S, V>(&self, seed: S) -> Result<V, CallToolResult>
    where
        S: Copy + for<'de> DeserializeSeed<'de, Value = V> + ReadNoting<V>,
    {
        let text = self.raw.map_or("{}", RawValue::get);
        let text = if text == "null" { "{}" } else { text };
        if let Some(kind) = not_an_object(text) {
            return Err(CallToolResult::error(format!(
                "invalid arguments: the arguments must be an object of named arguments (`{{\"name\": value}}`), not {kind}"
            )));
        }
        // The common case is read at full speed, only noting the names the type skips; only a
        // failure is read again, tracking the path of the field at fault.
        //
        // Each way of reading is compiled for every type read (a tool's own struct, or each
        // tree of parameter types), so there are two, both of the text: noting skipped names,
        // and tracking the path. Names are noted through a `dyn` callback, the same type for
        // every tool: with a closure of its own (a type per `T`), every reader `serde_ignored`
        // wraps around a field — an `i64`, a `String` — was compiled again for each tool,
        // nearly half of what a crate of tools generated.
        if let Some(parsed) = self.read_noting_skipped(seed, text)? {
            // A map or a free-form value keeps one of a repeated key's values without a
            // word, where a reader that keeps the other (a gateway, a policy) would see
            // another call: refused, as a struct's repeated field is. Only arguments with an
            // object inside are looked through again.
            if memchr::memchr_iter(b'{', text.as_bytes()).nth(1).is_some()
                && let Ok(Some((path, key))) = repeated_key(text)
            {
                return Err(invalid(&path, &format!("duplicate field `{key}`")));
            }
            return Ok(parsed);
        }
        let error = match track_path(seed, text) {
            Ok(()) => return Err(invalid(".", "trailing characters after the arguments")),
            Err(e) => e,
        };
        // Only the failure path pays for the retry, and only when a null is involved. The
        // nulls are dropped from a `Value`, which keeps the last of a repeated key: arguments
        // that repeat one are never retried, so they are refused as the text reads them.
        if text.contains("null")
            && !has_repeated_key(text)
            && let Some(fixed) = without_refused_nulls(seed, text, error.path())
            && let Some(parsed) = self.read_noting_skipped(seed, &fixed)?
        {
            return Ok(parsed);
        }
        let path = error.path().to_string();
        let message =
            crate::registry::tool::strip_position(&error.into_inner().to_string()).to_owned();
        Err(invalid(&path, &message))
    }

    /// The arguments read from their text through `seed`, `None` when they do not read; an
    /// error when they do but name properties the schema does not welcome.
    fn read_noting_skipped<S, V>(&self, seed: S, text: &str) -> Result<Option<V>, CallToolResult>
    where
        S: ReadNoting<V>,
    {
        let mut skipped = Skipped::default();
        let de = &mut serde_json::Deserializer::from_str(text);
        match seed.read_noting(&mut *de, &mut skipped) {
            Ok(parsed) if de.end().is_ok() => {
                self.refuse_unknown(&skipped.0)?;
                Ok(Some(parsed))
            }
            _ => Ok(None),
        }
    }

    /// The error for the names the type skipped that the schema does not welcome.
    fn refuse_unknown(&self, unknown: &[Vec<Segment>]) -> Result<(), CallToolResult> {
        let problems: Vec<String> = unknown
            .iter()
            .filter_map(|path| {
                let (Segment::Key(name), parent) = path.split_last()? else {
                    return None;
                };
                let at = self
                    .schema
                    .map(|schema| objects_at(schema, parent))
                    .unwrap_or_default();
                if at.iter().any(|o| opens(o)) {
                    return None;
                }
                Some(unknown_message(name, parent, &at))
            })
            .collect();
        if problems.is_empty() {
            return Ok(());
        }
        Err(CallToolResult::error(format!(
            "invalid arguments: {}",
            problems.join("; ")
        )))
    }
}

fn invalid(path: &str, message: &str) -> CallToolResult {
    CallToolResult::error(if path == "." {
        format!("invalid arguments: {message}")
    } else {
        format!("invalid arguments: `{path}`: {message}")
    })
}

/// What the arguments are when they are not an object (`None` when they are).
fn not_an_object(text: &str) -> Option<&'static str> {
    match text.trim_start().as_bytes().first()? {
        b'{' => None,
        b'[' => Some("an array"),
        b'"' => Some("a string"),
        b't' | b'f' => Some("a boolean"),
        b'-' | b'0'..=b'9' => Some("a number"),
        _ => None,
    }
}

/// One step of the path to a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// Reads the arguments, noting in `skipped` the path to each name their type skips.
pub(crate) trait ReadNoting<V> {
    fn read_noting<'de, D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
        skipped: &mut Skipped,
    ) -> Result<V, D::Error>;
}

/// A type of the user's own: read through `serde_ignored` as a whole, each key it reads
/// copied in case something under it is skipped.
impl<T: DeserializeOwned> ReadNoting<T> for PhantomData<T> {
    fn read_noting<'de, D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
        skipped: &mut Skipped,
    ) -> Result<T, D::Error> {
        let mut note = |path: serde_ignored::Path<'_>| skipped.0.push(segments(&path));
        let mut note: &mut Note = &mut note;
        T::deserialize(serde_ignored::Deserializer::new(deserializer, &mut note))
    }
}

/// A `#[tool]` function's parameters: their names are known, so only what is inside their
/// values goes through `serde_ignored` (see [`FieldsSeed::deserialize_noting`]).
impl<F: ArgumentFields> ReadNoting<F> for FieldsSeed<F> {
    fn read_noting<'de, D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
        skipped: &mut Skipped,
    ) -> Result<F, D::Error> {
        self.deserialize_noting(deserializer, skipped)
    }
}

/// What notes a name the arguments' type skipped (see [`Arguments::parse`]).
pub(crate) type Note<'a> = dyn FnMut(serde_ignored::Path<'_>) + 'a;

/// The keys and indices of a path serde_ignored reports (an `Option` or a newtype is no step).
pub(crate) fn segments(path: &serde_ignored::Path<'_>) -> Vec<Segment> {
    use serde_ignored::Path;
    let mut out = Vec::new();
    let mut node = path;
    loop {
        node = match node {
            Path::Root => break,
            Path::Seq { parent, index } => {
                out.push(Segment::Index(*index));
                parent
            }
            Path::Map { parent, key } => {
                out.push(Segment::Key(key.clone()));
                parent
            }
            Path::Some { parent }
            | Path::NewtypeStruct { parent }
            | Path::NewtypeVariant { parent } => parent,
        };
    }
    out.reverse();
    out
}

/// `filter.tags[0]`, as serde_path_to_error writes paths.
fn display_path(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) if out.is_empty() => out.push_str(key),
            Segment::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn unknown_message(name: &str, parent: &[Segment], objects: &[&Map<String, Value>]) -> String {
    let mut known: Vec<&str> = Vec::new();
    for object in objects {
        for key in object
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Map::keys)
        {
            if !known.contains(&key.as_str()) {
                known.push(key);
            }
        }
    }
    let (what, none) = if parent.is_empty() {
        ("unknown argument", "; the tool takes no arguments")
    } else {
        ("unknown field", "; this object has no fields")
    };
    let hint = match nearest(name, &known) {
        Some(close) => format!("; did you mean `{close}`?"),
        None if known.is_empty() => none.to_owned(),
        None => format!(
            "; expected {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if parent.is_empty() {
        format!("{what} `{name}`{hint}")
    } else {
        format!("`{}`: {what} `{name}`{hint}", display_path(parent))
    }
}

/// Whether an object schema takes properties beyond those it names.
fn opens(object: &Map<String, Value>) -> bool {
    let welcomes = |key: &str| {
        object
            .get(key)
            .is_some_and(|v| *v == Value::Bool(true) || v.is_object())
    };
    welcomes("additionalProperties")
        || welcomes("unevaluatedProperties")
        || object.contains_key("patternProperties")
}

/// How many `$ref`s and combinators one lookup follows, so a schema that refers to itself
/// ends the search.
const MAX_SCHEMA_STEPS: usize = 64;

/// The object schemas that may describe the value at `path` (several through `anyOf`,
/// `oneOf`, `allOf` and `$ref`).
fn objects_at<'s>(root: &'s Value, path: &[Segment]) -> Vec<&'s Map<String, Value>> {
    let mut current = Vec::new();
    expand(root, root, &mut current, &mut 0);
    for segment in path {
        let mut next = Vec::new();
        let mut steps = 0;
        for schema in &current {
            let child = match segment {
                Segment::Key(key) => schema
                    .get("properties")
                    .and_then(|p| p.get(key))
                    .or_else(|| schema.get("additionalProperties").filter(|v| v.is_object())),
                Segment::Index(i) => schema
                    .get("prefixItems")
                    .and_then(|p| p.get(*i))
                    .or_else(|| schema.get("items").filter(|v| v.is_object())),
            };
            if let Some(child) = child {
                expand(root, child, &mut next, &mut steps);
            }
        }
        current = next;
    }
    current
}

/// The schema itself and every schema it combines with, `$ref`s resolved.
fn expand<'s>(
    root: &'s Value,
    schema: &'s Value,
    into: &mut Vec<&'s Map<String, Value>>,
    steps: &mut usize,
) {
    *steps += 1;
    let Value::Object(map) = schema else { return };
    if *steps > MAX_SCHEMA_STEPS {
        return;
    }
    into.push(map);
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        expand(root, target, into, steps);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            expand(root, branch, into, steps);
        }
    }
    for key in ["then", "else"] {
        if let Some(branch) = map.get(key) {
            expand(root, branch, into, steps);
        }
    }
}

/// The known name closest to a misspelt one: within a third of its length in edits (one at
/// least, and never all of it), or one being a longer form of the other (`max` for
/// `max_results`).
fn nearest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let close = known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, k)| {
            let length = k.chars().count();
            *d <= (length / 3).max(1) && *d < length
        })
        .map(|(_, k)| k);
    close.or_else(|| {
        known.iter().copied().find(|k| {
            let (short, long) = if k.len() < name.len() {
                (*k, name)
            } else {
                (name, *k)
            };
            short.len() >= 3 && long.to_lowercase().starts_with(&short.to_lowercase())
        })
    })
}

/// Edits from one name to another, counted in characters: insertions, deletions,
/// substitutions, and swaps of two neighbours (`tga` is one edit from `tag`).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two back, one back, and the one being filled.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            current[j] = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                current[j] = current[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// How many refused `null`s one call may have dropped before its error stands.
const MAX_DROPPED_NULLS: usize = 64;

/// The arguments without the `null` members at `path` and at each path the next attempt
/// refuses, once `seed` reads them; `None` when the failure is anything else.
fn without_refused_nulls<S>(seed: S, text: &str, path: &serde_path_to_error::Path) -> Option<String>
where
    S: Copy + for<'de> DeserializeSeed<'de>,
{
    let mut value: Value = serde_json::from_str(text).ok()?;
    let mut path = path.clone();
    for _ in 0..MAX_DROPPED_NULLS {
        remove_null_member(&mut value, &path)?;
        // Read as text, the way a failure is first read: no third way of reading.
        let fixed = value.to_string();
        match track_path(seed, &fixed) {
            Ok(()) => return Some(fixed),
            Err(e) => path = e.path().clone(),
        }
    }
    None
}

/// Reads the text through `seed`, tracking the path to where it fails (what follows the
/// value is not looked at).
fn track_path<S>(seed: S, text: &str) -> Result<(), serde_path_to_error::Error<serde_json::Error>>
where
    S: for<'de> DeserializeSeed<'de>,
{
    let mut track = serde_path_to_error::Track::new();
    let de = &mut serde_json::Deserializer::from_str(text);
    match seed.deserialize(serde_path_to_error::Deserializer::new(de, &mut track)) {
        Ok(_) => Ok(()),
        Err(e) => Err(serde_path_to_error::Error::new(track.path(), e)),
    }
}

/// Whether an object anywhere in the text names a key twice (or the text cannot be looked
/// through).
fn has_repeated_key(text: &str) -> bool {
    !matches!(repeated_key(text), Ok(None))
}

/// The first key an object anywhere in the text names twice, and the path of that object
/// as the other refusals write it (`tree.children[0]`); `None` when there is none, `Err`
/// when the text cannot be looked through. Not generic: compiled once, not once per tool.
pub(crate) fn repeated_key(text: &str) -> Result<Option<(String, String)>, ()> {
    use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
    struct Scan<'s> {
        path: &'s mut Vec<Segment>,
        found: &'s mut Option<String>,
    }
    impl<'de> DeserializeSeed<'de> for Scan<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Scan<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            for index in 0.. {
                self.path.push(Segment::Index(index));
                let seed = Scan {
                    path: &mut *self.path,
                    found: &mut *self.found,
                };
                let more = seq.next_element_seed(seed)?.is_some();
                self.path.pop();
                if !more {
                    break;
                }
            }
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut keys = std::collections::HashSet::new();
            while let Some(crate::protocol::Text(key)) = map.next_key()? {
                if !keys.insert(key.clone()) {
                    *self.found = Some(key.into_owned());
                    // Nothing after the first repeat is looked at.
                    return Err(A::Error::custom("repeated"));
                }
                self.path.push(Segment::Key(key.into_owned()));
                let seed = Scan {
                    path: &mut *self.path,
                    found: &mut *self.found,
                };
                map.next_value_seed(seed)?;
                self.path.pop();
            }
            Ok(())
        }
    }
    let (mut path, mut found) = (Vec::new(), None);
    let scan = Scan {
        path: &mut path,
        found: &mut found,
    };
    let scanned = scan.deserialize(&mut serde_json::Deserializer::from_str(text));
    let Some(key) = found else {
        return scanned.map(|()| None).map_err(drop);
    };
    let written = match display_path(&path) {
        top if top.is_empty() => ".".to_owned(),
        written => written,
    };
    Ok(Some((written, key)))
}

/// Removes the object member a path names when its value is `null`.
fn remove_null_member(value: &mut Value, path: &serde_path_to_error::Path) -> Option<()> {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let (last, parents) = segments.split_last()?;
    let mut node = value;
    for segment in parents {
        node = match segment {
            Segment::Map { key } | Segment::Enum { variant: key } => node.get_mut(key.as_str())?,
            Segment::Seq { index } => node.get_mut(*index)?,
            Segment::Unknown => return None,
        };
    }
    let (Segment::Map { key }, Value::Object(map)) = (last, node) else {
        return None;
    };
    map.get(key.as_str()).filter(|v| v.is_null())?;
    map.remove(key.as_str());
    Some(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text_of(result: &CallToolResult) -> String {
        assert!(result.is_error);
        serde_json::to_value(&result.content[0]).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn raw(value: Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(&value).unwrap()
    }

    #[test]
    fn a_key_repeated_in_a_map_or_a_free_form_value_is_refused() {
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        struct Args {
            counts: std::collections::HashMap<String, u32>,
            #[serde(default)]
            anything: Option<Value>,
            #[serde(default)]
            list: Vec<Value>,
        }
        let read = |text: &str| {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            Arguments::new(Some(&raw)).parse::<Args>()
        };
        for (text, named) in [
            (
                r#"{"counts":{"a":1,"a":2}}"#,
                "`counts`: duplicate field `a`",
            ),
            (
                r#"{"counts":{"a":1,"\u0061":2}}"#,
                "`counts`: duplicate field `a`",
            ),
            (
                r#"{"counts":{},"anything":{"x":{"y":1,"z":[],"y":2}}}"#,
                "`anything.x`: duplicate field `y`",
            ),
            (
                r#"{"counts":{},"list":[{},{"k":1,"k":1}]}"#,
                "`list[1]`: duplicate field `k`",
            ),
        ] {
            let refusal = text_of(&read(text).err().unwrap_or_else(|| panic!("{text}")));
            assert_eq!(refusal, format!("invalid arguments: {named}"), "{text}");
        }
        // The same key in different objects is no repeat.
        let read =
            read(r#"{"counts":{"a":1,"b":2},"anything":{"a":{"a":1}},"list":[{"a":1},{"a":2}]}"#);
        assert!(read.is_ok());
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Search {
        query: String,
        #[serde(default)]
        limit: u32,
        filter: Option<Filter>,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Filter {
        tag: Option<String>,
    }

    fn search_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "filter": {
                    "type": ["object", "null"],
                    "properties": {"tag": {"type": "string"}},
                    "additionalProperties": false
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    /// The error text of `arguments` parsed as a [`Search`] under its schema.
    fn search_refusal(arguments: Value) -> String {
        let raw = raw(arguments);
        let err = Arguments::new(Some(&raw))
            .with_schema(&search_schema())
            .parse::<Search>()
            .unwrap_err();
        text_of(&err)
    }

    /// A tool's parameters as the macro used to derive them, and as it now lists them.
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Params {
        n: i64,
        label: String,
        #[serde(default = "Option::default")]
        limit: Option<u32>,
        filter: Option<Filter>,
    }

    type ParamList = (((i64,), (String,)), ((Option<u32>,), (Option<Filter>,)));

    #[test]
    fn a_parameter_list_reads_as_the_struct_of_the_same_fields_does() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "label": {"type": "string"},
                "limit": {"type": "integer"},
                "filter": search_schema()["properties"]["filter"],
            },
            "required": ["n", "label"],
            "additionalProperties": false
        });
        let cases = [
            r#"{"n": 1, "label": "a"}"#,
            r#"{"label": "a", "n": -7, "limit": 3, "filter": {"tag": "x"}}"#,
            r#"{}"#,
            r#"null"#,
            r#"[]"#,
            r#""text""#,
            r#"{"n": 1}"#,
            r#"{"label": "a"}"#,
            r#"{"n": "1", "label": "a"}"#,
            r#"{"n": 1, "label": null}"#,
            r#"{"n": 1, "label": "a", "limit": null}"#,
            r#"{"n": 1, "label": "a", "limit": -1}"#,
            r#"{"n": 1, "label": "a", "filter": null}"#,
            r#"{"n": 1, "label": "a", "filter": {"tag": null}}"#,
            r#"{"n": 1, "label": "a", "filter": {"tga": "x"}}"#,
            r#"{"n": 1, "label": "a", "filter": []}"#,
            r#"{"n": 1, "lable": "a"}"#,
            r#"{"n": 1, "label": "a", "zzzzzzzzzz": 1}"#,
            r#"{"lable": "b", "n": 1, "label": "a", "filter": {"tga": "x"}}"#,
            r#"{"filter": {"tag": "x", "tga": "x", "gat": 1}, "n": 1, "lable": "b", "label": "a"}"#,
            r#"{"n": 1, "label": "a", "\u006cable": "b"}"#,
            r#"{"n": 1, "label": "a", "n": 2}"#,
            r#"{"n": 1, "label": "a", "n": null}"#,
            r#"{"n": null, "label": "a", "n": 2}"#,
            r#"{"n": 18446744073709551616, "label": "a"}"#,
        ];
        for case in cases {
            let raw = RawValue::from_string(case.to_owned()).unwrap();
            let arguments = Arguments::new(Some(&raw)).with_schema(&schema);
            let derived = arguments.parse::<Params>();
            let listed = arguments
                .parse_fields::<ParamList>(&["n", "label", "limit", "filter"])
                .map(|(((n,), (label,)), ((limit,), (filter,)))| Params {
                    n,
                    label,
                    limit,
                    filter,
                });
            assert_read_alike(case, derived, listed);
        }
    }

    /// The same value from both readers, or the same refusal.
    fn assert_read_alike<T: PartialEq + std::fmt::Debug>(
        case: &str,
        derived: Result<T, CallToolResult>,
        listed: Result<T, CallToolResult>,
    ) {
        match (derived, listed) {
            (Ok(derived), Ok(listed)) => assert_eq!(derived, listed, "{case}"),
            (Err(derived), Err(listed)) => {
                assert_eq!(text_of(&derived), text_of(&listed), "{case}")
            }
            (derived, listed) => panic!("{case}: {derived:?} against {listed:?}"),
        }
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    enum Choice {
        A(Filter),
        B { x: i64 },
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Shapes {
        v: Option<Vec<Filter>>,
        m: Option<std::collections::BTreeMap<String, Filter>>,
        e: Option<Choice>,
        val: Option<Value>,
    }

    type ShapeList = (
        (
            (Option<Vec<Filter>>,),
            (Option<std::collections::BTreeMap<String, Filter>>,),
        ),
        ((Option<Choice>,), (Option<Value>,)),
    );

    /// Paths through arrays, maps, enum variants and free-form values, and names given in
    /// escaped form, are noted alike by the parameter reader and by a derived struct.
    #[test]
    fn a_parameter_list_notes_skipped_names_in_every_shape_as_a_struct_does() {
        let filter = search_schema()["properties"]["filter"].clone();
        let schema = json!({
            "type": "object",
            "properties": {
                "v": {"type": "array", "items": filter},
                "m": {"type": "object", "additionalProperties": filter},
                "e": {"oneOf": [
                    {"type": "object", "properties": {"A": filter}, "additionalProperties": false},
                    {"type": "object", "properties": {"B": {"type": "object",
                        "properties": {"x": {"type": "integer"}}, "additionalProperties": false}},
                        "additionalProperties": false}
                ]},
                "val": {},
            },
            "additionalProperties": false
        });
        let cases = [
            r#"{"v": [{"tag": "x"}, {"tga": 1}]}"#,
            r#"{"m": {"k": {"tga": 1}, "l": {"tag": "y"}}}"#,
            r#"{"e": {"B": {"x": 1, "y": 2}}}"#,
            r#"{"e": {"A": {"tga": 1}}}"#,
            r#"{"val": {"anything": 1}}"#,
            r#"{"zz": {"a": [1, {"b": 2}]}}"#,
            r#"{"zz": 1, "zz": 2}"#,
            r#"{"\u0076": [{"tag": "x"}]}"#,
            r#"{"v": [], "\u0076": []}"#,
            r#"{"v": [{"t\u0067a": 1}]}"#,
            r#"{"v": [{"tga": 1}], "e": {"B": {"y": 2}}, "zz": 0}"#,
        ];
        for case in cases {
            let raw = RawValue::from_string(case.to_owned()).unwrap();
            let arguments = Arguments::new(Some(&raw)).with_schema(&schema);
            let derived = arguments.parse::<Shapes>();
            let listed = arguments
                .parse_fields::<ShapeList>(&["v", "m", "e", "val"])
                .map(|(((v,), (m,)), ((e,), (val,)))| Shapes { v, m, e, val });
            assert_read_alike(case, derived, listed);
        }
        // No parameters at all: every name is unknown, and nothing inside it is looked at.
        let raw = raw(json!({"x": {"y": 1}}));
        let none = Arguments::new(Some(&raw))
            .with_schema(&json!({"type": "object", "additionalProperties": false}))
            .parse_fields::<()>(&[])
            .unwrap_err();
        assert_eq!(
            text_of(&none),
            "invalid arguments: unknown argument `x`; the tool takes no arguments"
        );
    }

    #[test]
    fn argument_errors_name_the_field_and_the_expected_type() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Args {
            a: i64,
        }
        let raw = raw(json!({"a": "x"}));
        let err = Arguments::new(Some(&raw)).parse::<Args>().unwrap_err();
        assert_eq!(
            text_of(&err),
            "invalid arguments: `a`: invalid type: string \"x\", expected i64"
        );
    }

    /// Refusals name what the text says first, and a repeated name is refused even where a
    /// refused `null` would otherwise be dropped (the retry reads a `Value`, which keeps the
    /// last of a repeated key).
    #[test]
    fn a_repeated_name_is_refused_however_the_nulls_fall() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Tree {
            label: String,
            #[serde(default)]
            children: Vec<Tree>,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Args {
            tree: Tree,
            #[serde(default)]
            limit: u32,
        }
        let refusal = |text: &str| {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            let parsed = Arguments::new(Some(&raw)).parse::<Args>();
            text_of(&parsed.expect_err(text))
        };
        // Refused as the text reads: the repeat, or the null the text meets before it.
        for (text, named) in [
            (
                r#"{"tree":{"label":"a","label":"b","children":null}}"#,
                "`tree`: duplicate field `label`",
            ),
            (
                r#"{"tree":{"children":null,"label":"a","label":"b"}}"#,
                "`tree.children`: invalid type: null",
            ),
            (
                r#"{"limit":null,"tree":{"label":"a","children":[{"label":"x","label":"y"}]}}"#,
                "`limit`: invalid type: null",
            ),
            (
                r#"{"tree":{"label":"x"},"tree":{"label":"z","children":null}}"#,
                "duplicate field `tree`",
            ),
        ] {
            assert!(refusal(text).contains(named), "{text}: {}", refusal(text));
        }
        // Without a repeat, the same nulls are dropped as before.
        let raw = RawValue::from_string(
            r#"{"limit":null,"tree":{"label":"a","children":null}}"#.to_owned(),
        )
        .unwrap();
        assert!(Arguments::new(Some(&raw)).parse::<Args>().is_ok());
        // Of two wrong arguments, the first in the text is named.
        assert_eq!(
            refusal(r#"{"tree":{"label":1},"limit":"x"}"#),
            "invalid arguments: `tree.label`: invalid type: integer `1`, expected a string"
        );
        assert_eq!(
            refusal(r#"{"limit":"x","tree":{"label":1}}"#),
            "invalid arguments: `limit`: invalid type: string \"x\", expected u32"
        );
    }

    #[test]
    fn a_misspelt_argument_is_refused_naming_the_closest_known_one() {
        assert_eq!(
            search_refusal(json!({"query": "e", "limt": 1})),
            "invalid arguments: unknown argument `limt`; did you mean `limit`?"
        );
    }

    #[test]
    fn a_misspelt_field_inside_an_argument_is_refused_with_its_path() {
        assert_eq!(
            search_refusal(json!({"query": "e", "filter": {"tga": "x"}})),
            "invalid arguments: `filter`: unknown field `tga`; did you mean `tag`?"
        );
    }

    #[test]
    fn an_unknown_name_far_from_every_known_one_lists_them() {
        assert_eq!(
            search_refusal(json!({"query": "e", "zzzzzz": 1})),
            "invalid arguments: unknown argument `zzzzzz`; expected `filter`, `limit`, `query`"
        );
    }

    #[test]
    fn an_object_the_schema_opens_takes_other_properties() {
        let raw = raw(json!({"query": "e", "extra": 1}));
        let schema =
            json!({"type": "object", "properties": {"query": {}}, "additionalProperties": true});
        let parsed = Arguments::new(Some(&raw))
            .with_schema(&schema)
            .parse::<Search>()
            .unwrap();
        assert_eq!(parsed.query, "e");
    }

    #[test]
    fn arguments_that_are_not_an_object_are_refused_as_such() {
        #[derive(serde::Deserialize, Debug)]
        struct WordCount {
            #[allow(dead_code)]
            text: String,
        }
        for (value, kind) in [
            (json!([]), "an array"),
            (json!("text"), "a string"),
            (json!(3), "a number"),
            (json!(true), "a boolean"),
        ] {
            let raw = raw(value);
            let err = Arguments::new(Some(&raw)).parse::<WordCount>().unwrap_err();
            let text = text_of(&err);
            assert_eq!(
                text,
                format!(
                    "invalid arguments: the arguments must be an object of named arguments (`{{\"name\": value}}`), not {kind}"
                )
            );
            assert!(!text.contains("WordCount"), "{text}");
        }
    }

    #[test]
    fn a_null_for_a_defaulted_field_means_not_given() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Args {
            a: Option<i64>,
            #[serde(default)]
            b: u32,
            #[serde(default)]
            inner: Inner,
        }
        #[derive(serde::Deserialize, Debug, PartialEq, Default)]
        struct Inner {
            #[serde(default = "seven")]
            c: u8,
        }
        fn seven() -> u8 {
            7
        }
        let raw = raw(json!({"a": null, "b": null, "inner": {"c": null}}));
        let parsed = Arguments::new(Some(&raw)).parse::<Args>().unwrap();
        assert_eq!(
            parsed,
            Args {
                a: None,
                b: 0,
                inner: Inner { c: 7 }
            }
        );
    }

    #[test]
    fn a_null_dropped_does_not_let_a_misspelt_name_through() {
        assert_eq!(
            search_refusal(json!({"query": "e", "limit": null, "limt": 1})),
            "invalid arguments: unknown argument `limt`; did you mean `limit`?"
        );
    }

    #[test]
    fn a_null_for_a_required_field_is_still_an_error_naming_it() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Args {
            a: i64,
        }
        let raw = raw(json!({"a": null}));
        let err = Arguments::new(Some(&raw)).parse::<Args>().unwrap_err();
        assert_eq!(
            text_of(&err),
            "invalid arguments: `a`: invalid type: null, expected i64"
        );
    }

    #[test]
    fn missing_arguments_are_an_empty_object() {
        #[derive(serde::Deserialize)]
        struct NoArgs {}
        assert!(Arguments::new(None).parse::<NoArgs>().is_ok());
    }

    #[test]
    fn close_names_are_found_by_edits_or_by_a_longer_form() {
        assert_eq!(nearest("limt", &["query", "limit"]), Some("limit"));
        assert_eq!(nearest("qry", &["query", "limit"]), None);
        assert_eq!(nearest("tga", &["tag"]), Some("tag"));
        assert_eq!(nearest("c", &["a", "b"]), None);
        assert_eq!(edit_distance("chidren", "children"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(nearest("max", &["max_results"]), Some("max_results"));
        assert_eq!(nearest("zzzzzz", &["query", "limit"]), None);
    }
}
