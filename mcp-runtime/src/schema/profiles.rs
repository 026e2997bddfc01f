//! Schema profiles: the rules one kind of client needs, the table of clients known to need
//! them, and the profiles a server serves with.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use serde_json::Value;

use super::rules::{self, Note, Rule, Target};

/// How a tool's JSON Schemas are shaped before they are sent, for clients and model APIs that
/// refuse part of JSON Schema 2020-12.
///
/// A server uses [`SchemaProfile::Default`] unless told otherwise; the clients of
/// [`known_clients`] get their profile automatically (see
/// [`ServerBuilder::per_client_schema_profiles`](crate::ServerBuilder::per_client_schema_profiles)).
/// Arguments shaped by any profile still deserialise into the tool's own Rust types.
///
/// ```
/// use mcp_runtime::schema::SchemaProfile;
/// use mcp_runtime::serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0}}
/// });
/// let shaped = SchemaProfile::Gemini.shape_input(&schema);
/// assert_eq!(shaped["properties"]["limit"], json!({
///     "type": "integer",
///     "nullable": true,
///     "minimum": 0,
///     "description": "Format: uint32."
/// }));
/// assert_eq!("openai-strict".parse(), Ok(SchemaProfile::OpenAiStrict));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaProfile {
    /// JSON Schema 2020-12 as derived: every subschema inlined except where a type is
    /// recursive, no `$schema`. No rule applies; an explicit `input_schema` is sent as written.
    #[default]
    Default,
    /// Claude Desktop and the Anthropic API: no `$ref` (it is not resolved), no `anyOf`,
    /// `oneOf` or `allOf` at the top level, no `$schema`.
    Anthropic,
    /// The Gemini API (an OpenAPI 3.0 subset): no `$ref`, `additionalProperties`, `const`,
    /// `oneOf` or type lists (`nullable: true` instead), and only the formats `int32`,
    /// `int64`, `float`, `double`, `date-time` and `enum`.
    Gemini,
    /// OpenAI's strict mode: every property required (optional ones nullable), every object
    /// closed with `additionalProperties: false`, no `format`, `default` or length limits.
    OpenAiStrict,
    /// JSON Schema draft-07, for clients that validate with a draft-07 validator:
    /// `definitions` for `$defs`, array `items` for tuples, no `$schema`.
    Draft07,
    /// Your own list of rules, applied in order to the default output.
    Custom(Vec<Rule>),
}

/// The keywords the Gemini API does not read.
const GEMINI_UNSUPPORTED: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "patternProperties",
    "propertyNames",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "contains",
    "minContains",
    "maxContains",
    "$comment",
    "$id",
    "$anchor",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentEncoding",
    "contentMediaType",
];

/// The formats the Gemini API reads.
const GEMINI_FORMATS: &[&str] = &["int32", "int64", "float", "double", "date-time", "enum"];

/// The keywords OpenAI's strict mode refuses.
const OPENAI_UNSUPPORTED: &[&str] = &[
    "format",
    "default",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
];

const ANTHROPIC_RULES: &[Rule] = &[
    Rule::InlineRefs,
    Rule::DropDialect,
    Rule::FlattenTopLevelCombinators,
];

const GEMINI_RULES: &[Rule] = &[
    Rule::InlineRefs,
    Rule::DropDialect,
    Rule::FlattenTopLevelCombinators,
    Rule::OneOfToAnyOf,
    Rule::ConstToEnum,
    Rule::PrefixItemsToItems,
    Rule::NullableKeyword,
    Rule::StripKeywords(GEMINI_UNSUPPORTED),
    Rule::KeepFormats(GEMINI_FORMATS),
];

const OPENAI_STRICT_RULES: &[Rule] = &[
    Rule::DropDialect,
    Rule::FlattenTopLevelCombinators,
    Rule::OneOfToAnyOf,
    Rule::PrefixItemsToItems,
    Rule::StripKeywords(OPENAI_UNSUPPORTED),
    Rule::RequireAllProperties,
];

const DRAFT_07_RULES: &[Rule] = &[Rule::DropDialect, Rule::Draft07Keywords];

impl SchemaProfile {
    /// Every profile but `Custom`, in a fixed order.
    pub const BUILT_IN: &'static [SchemaProfile] = &[
        SchemaProfile::Default,
        SchemaProfile::Anthropic,
        SchemaProfile::Gemini,
        SchemaProfile::OpenAiStrict,
        SchemaProfile::Draft07,
    ];

    /// The profile's name: `default`, `anthropic`, `gemini`, `openai-strict`, `draft-07` or
    /// `custom`. The built-in names are what `#[tool(schema_profile = "…")]` accepts.
    pub fn name(&self) -> &'static str {
        match self {
            SchemaProfile::Default => "default",
            SchemaProfile::Anthropic => "anthropic",
            SchemaProfile::Gemini => "gemini",
            SchemaProfile::OpenAiStrict => "openai-strict",
            SchemaProfile::Draft07 => "draft-07",
            SchemaProfile::Custom(_) => "custom",
        }
    }

    /// The rules the profile applies, in order.
    ///
    /// ```
    /// use mcp_runtime::schema::{Rule, SchemaProfile};
    /// assert!(SchemaProfile::Anthropic.rules().contains(&Rule::InlineRefs));
    /// assert!(SchemaProfile::Default.rules().is_empty());
    /// ```
    pub fn rules(&self) -> &[Rule] {
        match self {
            SchemaProfile::Default => &[],
            SchemaProfile::Anthropic => ANTHROPIC_RULES,
            SchemaProfile::Gemini => GEMINI_RULES,
            SchemaProfile::OpenAiStrict => OPENAI_STRICT_RULES,
            SchemaProfile::Draft07 => DRAFT_07_RULES,
            SchemaProfile::Custom(rules) => rules,
        }
    }

    /// Shapes a tool's `inputSchema`.
    pub fn shape_input(&self, schema: &Value) -> Value {
        self.shape(schema, Target::Input).0
    }

    /// Shapes a tool's `outputSchema`. Rules that would narrow what the server may send
    /// ([`Rule::RequireAllProperties`]) do not apply.
    pub fn shape_output(&self, schema: &Value) -> Value {
        self.shape(schema, Target::Output).0
    }

    /// A tool's name as this profile sends it (shortened by [`Rule::MaxToolNameLength`]).
    ///
    /// ```
    /// use mcp_runtime::schema::{Rule, SchemaProfile};
    /// let cursor = SchemaProfile::Custom(vec![Rule::MaxToolNameLength(20)]);
    /// assert_eq!(cursor.tool_name("search"), "search");
    /// assert_eq!(cursor.tool_name("search_the_whole_knowledge_base").len(), 20);
    /// ```
    pub fn tool_name<'a>(&self, name: &'a str) -> Cow<'a, str> {
        self.rules()
            .iter()
            .fold(Cow::Borrowed(name), |name, rule| match rule {
                Rule::MaxToolNameLength(max) => match rules::shorten_name(&name, *max) {
                    Cow::Borrowed(_) => name,
                    Cow::Owned(short) => Cow::Owned(short),
                },
                _ => name,
            })
    }

    /// Shapes a schema, with notes of what it no longer checks.
    pub(crate) fn shape(&self, schema: &Value, target: Target) -> (Value, Vec<Note>) {
        let mut shaped = schema.clone();
        let mut notes = Vec::new();
        for rule in self.rules() {
            rules::apply(*rule, &mut shaped, target, &mut notes);
        }
        (shaped, notes)
    }

    /// What in a shaped schema this profile's clients may refuse.
    pub(crate) fn check(&self, shaped: &Value, target: Target) -> Vec<Note> {
        let mut problems = Vec::new();
        for rule in self.rules() {
            rules::check(*rule, shaped, target, &mut problems);
        }
        problems.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        problems.dedup();
        problems
    }
}

impl fmt::Display for SchemaProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile name that names no built-in profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSchemaProfile(pub String);

impl fmt::Display for UnknownSchemaProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = SchemaProfile::BUILT_IN
            .iter()
            .map(|p| format!("`{}`", p.name()))
            .collect();
        write!(
            f,
            "unknown schema profile `{}`; expected one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownSchemaProfile {}

impl FromStr for SchemaProfile {
    type Err = UnknownSchemaProfile;

    /// A built-in profile by its [`name`](SchemaProfile::name).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        SchemaProfile::BUILT_IN
            .iter()
            .find(|p| p.name() == name)
            .cloned()
            .ok_or_else(|| UnknownSchemaProfile(name.to_owned()))
    }
}

/// A client known to refuse part of what the default schemas contain, and the profile it
/// gets when per-client profiles are on.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct KnownClient {
    /// The `clientInfo.name` it sends at `initialize` (compared without regard to case).
    pub name: &'static str,
    /// What the client is.
    pub client: &'static str,
    /// The profile it gets.
    pub profile: SchemaProfile,
    /// What it refuses.
    pub reason: &'static str,
}

static KNOWN_CLIENTS: LazyLock<Vec<KnownClient>> = LazyLock::new(|| {
    vec![
        KnownClient {
            name: "claude-ai",
            client: "Claude Desktop",
            profile: SchemaProfile::Anthropic,
            reason: "does not resolve `$ref`; the Anthropic API refuses `anyOf`, `oneOf` and `allOf` at the top level",
        },
        KnownClient {
            name: "claude-code",
            client: "Claude Code",
            profile: SchemaProfile::Anthropic,
            reason: "the Anthropic API refuses `anyOf`, `oneOf` and `allOf` at the top level",
        },
        KnownClient {
            name: "gemini-cli-mcp-client",
            client: "Gemini CLI",
            profile: SchemaProfile::Gemini,
            reason: "the Gemini API refuses `$ref`, `additionalProperties`, `const` and lists of types",
        },
        KnownClient {
            name: "cursor-vscode",
            client: "Cursor",
            profile: SchemaProfile::Custom(vec![Rule::MaxToolNameLength(60)]),
            reason: "drops tools whose names are longer than 60 characters",
        },
    ]
});

/// The built-in table of clients that get a profile of their own. Every profile in it only
/// widens what the default schema accepts (no [`SchemaProfile::OpenAiStrict`]), so choosing
/// it can only help that client; a server may change any entry with
/// [`ServerBuilder::schema_profile_for_client`](crate::ServerBuilder::schema_profile_for_client).
///
/// ```
/// use mcp_runtime::schema::{SchemaProfile, known_clients};
/// let claude = known_clients().iter().find(|c| c.name == "claude-ai").unwrap();
/// assert_eq!(claude.profile, SchemaProfile::Anthropic);
/// ```
pub fn known_clients() -> &'static [KnownClient] {
    &KNOWN_CLIENTS
}

/// Whether a client name matches a pattern: equal without regard to ASCII case, where `*`
/// in the pattern stands for any run of characters.
pub(crate) fn name_matches(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.to_ascii_lowercase(), name.to_ascii_lowercase());
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The profiles one server serves with. Each has a slot: the built-in profiles first, in
/// [`SchemaProfile::BUILT_IN`] order (so slot 0 is the default), then each custom profile the
/// server names. Tools cache their wire forms by slot.
#[derive(Debug)]
pub(crate) struct ServerProfiles {
    slots: Vec<SchemaProfile>,
    /// The slot of sessions whose client matches nothing (or of every session).
    base: usize,
    per_client: bool,
    /// Client-name patterns and their slots, in the order they are tried.
    clients: Vec<(String, usize)>,
}

impl ServerProfiles {
    /// `fixed` (the builder's `schema_profile`) turns per-client choice off; `overrides` are
    /// tried most recent first, before the built-in table.
    pub(crate) fn new(
        fixed: Option<SchemaProfile>,
        per_client: bool,
        overrides: Vec<(String, SchemaProfile)>,
    ) -> Self {
        let mut profiles = ServerProfiles {
            slots: SchemaProfile::BUILT_IN.to_vec(),
            base: 0,
            per_client: per_client && fixed.is_none(),
            clients: Vec::new(),
        };
        if let Some(fixed) = fixed {
            profiles.base = profiles.slot_of(fixed);
        }
        for (pattern, profile) in overrides.into_iter().rev() {
            let slot = profiles.slot_of(profile);
            profiles.clients.push((pattern, slot));
        }
        for known in known_clients() {
            let slot = profiles.slot_of(known.profile.clone());
            profiles.clients.push((known.name.to_owned(), slot));
        }
        profiles
    }

    fn slot_of(&mut self, profile: SchemaProfile) -> usize {
        match self.slots.iter().position(|p| *p == profile) {
            Some(slot) => slot,
            None => {
                self.slots.push(profile);
                self.slots.len() - 1
            }
        }
    }

    /// Every profile of the server, by slot.
    pub(crate) fn all(&self) -> &[SchemaProfile] {
        &self.slots
    }

    pub(crate) fn get(&self, slot: usize) -> &SchemaProfile {
        self.slots.get(slot).unwrap_or(&self.slots[0])
    }

    pub(crate) fn base_slot(&self) -> usize {
        self.base
    }

    pub(crate) fn per_client(&self) -> bool {
        self.per_client
    }

    /// The slot a client with this `clientInfo.name` gets.
    pub(crate) fn slot_for_client(&self, name: &str) -> usize {
        if !self.per_client {
            return self.base;
        }
        self.clients
            .iter()
            .find(|(pattern, _)| name_matches(pattern, name))
            .map_or(self.base, |(_, slot)| *slot)
    }
}

impl Default for ServerProfiles {
    fn default() -> Self {
        ServerProfiles::new(None, true, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn built_in_profiles_parse_from_their_names() {
        for profile in SchemaProfile::BUILT_IN {
            assert_eq!(
                profile.name().parse::<SchemaProfile>().as_ref(),
                Ok(profile)
            );
        }
        let error = "antropic".parse::<SchemaProfile>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown schema profile `antropic`; expected one of `default`, `anthropic`, `gemini`, `openai-strict`, `draft-07`"
        );
    }

    #[test]
    fn the_default_profile_changes_nothing() {
        let schema = json!({"$schema": "x", "type": "object", "$defs": {}});
        assert_eq!(SchemaProfile::Default.shape_input(&schema), schema);
    }

    #[test]
    fn client_patterns_ignore_case_and_expand_stars() {
        assert!(name_matches("claude-ai", "Claude-AI"));
        assert!(name_matches("claude-*", "claude-code"));
        assert!(name_matches("*-client", "gemini-cli-mcp-client"));
        assert!(name_matches("a*b*c", "axxbyyc"));
        assert!(!name_matches("claude-ai", "claude-ai-beta"));
        assert!(!name_matches("a*b*c", "axxc"));
        assert!(name_matches("*", "anything"));
    }

    #[test]
    fn known_clients_get_their_profile_and_others_the_default() {
        let profiles = ServerProfiles::default();
        let slot = profiles.slot_for_client("claude-ai");
        assert_eq!(profiles.get(slot), &SchemaProfile::Anthropic);
        let slot = profiles.slot_for_client("cursor-vscode");
        assert_eq!(
            profiles.get(slot),
            &SchemaProfile::Custom(vec![Rule::MaxToolNameLength(60)])
        );
        assert_eq!(profiles.slot_for_client("some-new-client"), 0);
    }

    #[test]
    fn the_latest_override_wins_and_a_fixed_profile_ends_per_client_choice() {
        let profiles = ServerProfiles::new(
            None,
            true,
            vec![
                ("claude-*".into(), SchemaProfile::Draft07),
                ("claude-code".into(), SchemaProfile::OpenAiStrict),
            ],
        );
        let get = |name| profiles.get(profiles.slot_for_client(name));
        assert_eq!(get("claude-code"), &SchemaProfile::OpenAiStrict);
        assert_eq!(get("claude-ai"), &SchemaProfile::Draft07);
        let fixed = ServerProfiles::new(Some(SchemaProfile::Gemini), true, Vec::new());
        assert_eq!(
            fixed.get(fixed.slot_for_client("claude-ai")),
            &SchemaProfile::Gemini
        );
        let off = ServerProfiles::new(None, false, Vec::new());
        assert_eq!(off.slot_for_client("claude-ai"), 0);
    }

    #[test]
    fn no_profile_in_the_built_in_table_narrows_what_is_accepted() {
        for known in known_clients() {
            assert!(
                !known.profile.rules().contains(&Rule::RequireAllProperties),
                "{}",
                known.name
            );
        }
    }
}
