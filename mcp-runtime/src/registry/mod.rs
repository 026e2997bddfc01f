//! The catalogue of a server: tools, prompts and resources collected by `inventory` or listed
//! explicitly, checked for duplicates, with their schemas and wire forms built once.
//!
//! [`Items`] holds every item with its enabled flag and changes at run time; each change
//! publishes a new immutable [`Catalogue`] of the enabled items, which requests read without
//! locking anything but a pointer swap.

mod arguments;
pub(crate) use arguments::repeated_key;
mod fields;
pub(crate) mod headers;
mod prompt;
mod resource;
mod tool;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::completion::{Completion, CompletionContext};
use crate::protocol::{ListKind, ProtocolVersion};
use crate::session::SessionVisibility;
use crate::state::States;
use crate::uri_template::UriVariables;

pub(crate) use prompt::CataloguePrompt;

/// The completion of an argument of a prompt or template made at run time (a mounted
/// server's, which answers it), which its descriptor's plain functions cannot hold.
pub(crate) type DynamicCompleter = Arc<
    dyn Fn(
            crate::Context,
            CompletionContext,
        ) -> std::pin::Pin<
            Box<
                dyn std::future::Future<Output = Result<Completion, crate::protocol::RpcError>>
                    + Send,
            >,
        > + Send
        + Sync,
>;
pub use fields::ArgumentFields;
#[cfg(feature = "dynamic")]
pub(crate) use prompt::DynamicPromptHandler;
pub use prompt::{Prompt, PromptArgumentDescriptor, PromptDescriptor, PromptEntry, PromptFuture};
pub(crate) use resource::CatalogueResource;
#[cfg(feature = "dynamic")]
pub(crate) use resource::DynamicResourceHandler;
pub use resource::{
    ResourceDescriptor, ResourceEntry, ResourceFuture, ResourceItem, ResourceLister,
    ResourceRequest,
};
pub(crate) use tool::CatalogueTool;
#[cfg(feature = "dynamic")]
pub(crate) use tool::DynamicHandler;
pub(crate) use tool::strip_position;
pub use tool::{Arguments, Tool, ToolDescriptor, ToolEntry, ToolFuture};

/// Where an item was defined, for error messages about duplicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    /// The file, as `file!()` gives it.
    pub file: &'static str,
    /// The line, as `line!()` gives it.
    pub line: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Line 0: an item made at run time, named by where it comes from.
        if self.line == 0 {
            return f.write_str(self.file);
        }
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// An icon of a tool, prompt, resource or template (sent from 2025-11-25 on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Icon {
    /// A URL or `data:` URI of the image.
    pub src: &'static str,
    /// Its MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<&'static str>,
    /// The sizes it suits, e.g. `"48x48"` or `"any"`.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub sizes: &'static [&'static str],
}

/// A completion function attached to a prompt argument or a template variable.
#[derive(Debug)]
pub struct CompletionDescriptor {
    /// The argument or variable it completes.
    pub argument: &'static str,
    /// The function.
    pub complete: fn(&CompletionContext) -> Completion,
}

/// A problem found while building a server's catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogueError {
    /// Two different items of one kind have the same name (or URI).
    Duplicate {
        /// `"tool"`, `"prompt"` or `"resource"`.
        kind: &'static str,
        /// The name or URI.
        name: &'static str,
        /// Where the first is defined.
        first: SourceLocation,
        /// Where the second is defined.
        second: SourceLocation,
    },
    /// A tool's input schema does not describe an object.
    InputSchemaNotObject {
        /// The tool.
        name: &'static str,
        /// Where it is defined.
        location: SourceLocation,
    },
    /// An item's `meta` is not a JSON object.
    InvalidMeta {
        /// The item.
        name: &'static str,
        /// Where it is defined.
        location: SourceLocation,
    },
    /// A tool's `x-mcp-header` marks break the specification's rules.
    InvalidHeader {
        /// The tool.
        name: &'static str,
        /// What is wrong.
        problem: String,
        /// Where it is defined.
        location: SourceLocation,
    },
    /// A resource URI template does not parse.
    InvalidUriTemplate {
        /// The template.
        uri: &'static str,
        /// What is wrong.
        problem: String,
        /// Where it is defined.
        location: SourceLocation,
    },
    /// An item takes a type of state (`State<T>`, or a `#[tools]` block's value) the server
    /// was not given.
    MissingState {
        /// `"tool"`, `"prompt"` or `"resource"`.
        kind: &'static str,
        /// The item's name (or URI).
        name: &'static str,
        /// The type, as the function writes it.
        written: &'static str,
        /// Where the item is defined.
        location: SourceLocation,
    },
    /// A method or notification of the server's own has a name it cannot have.
    ReservedMethod {
        /// The name.
        name: String,
        /// Why not.
        problem: &'static str,
    },
    /// A tool made at run time cannot be served as it is.
    InvalidDynamicTool {
        /// The tool's name, cut at 200 characters.
        name: String,
        /// Why not.
        problem: String,
    },
    /// An item made at run time is new text past the bound on what such items keep: each
    /// distinct name, description and annotation set of one stays for the life of the
    /// process (its descriptor is `'static`), so the text they keep is bounded.
    MadeTextLimit {
        /// `"tool"`, `"prompt"` or `"resource"`.
        kind: &'static str,
        /// The item's name (or URI), cut at 200 characters.
        name: String,
        /// Where it comes from (`the server mounted as …`), if not from the program itself.
        origin: Option<String>,
        /// The bound, in bytes.
        limit: usize,
    },
    /// The skills given to the builder break the skills extension's rules.
    InvalidSkills {
        /// Which file or skill, and why.
        problem: String,
    },
    /// Two state values of one type were given to the builder.
    DuplicateState {
        /// The type.
        type_name: &'static str,
    },
    /// A key given to `request_state_keys` is too short to seal anything safely.
    WeakRequestStateKey {
        /// `"current"` or `"previous"`.
        which: &'static str,
        /// Its length in bytes.
        bytes: usize,
    },
}

impl fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogueError::Duplicate {
                kind,
                name,
                first,
                second,
            } => write!(
                f,
                "two {kind}s are named `{name}`: one defined at {first}, one at {second}; rename one of them"
            ),
            CatalogueError::InputSchemaNotObject { name, location } => write!(
                f,
                "the arguments of tool `{name}` (defined at {location}) must be an object with named fields: with `#[tool(args)]`, take a struct with named fields, or remove `args` to make the parameter one argument; an `input_schema` function must describe an object"
            ),
            CatalogueError::InvalidMeta { name, location } => write!(
                f,
                "the `meta` of `{name}` (defined at {location}) must be the text of a JSON object"
            ),
            CatalogueError::InvalidHeader {
                name,
                problem,
                location,
            } => write!(
                f,
                "the tool `{name}` (defined at {location}) cannot mirror its arguments into headers: {problem}"
            ),
            CatalogueError::InvalidUriTemplate {
                uri,
                problem,
                location,
            } => write!(
                f,
                "invalid URI template `{uri}` (defined at {location}): {problem}"
            ),
            CatalogueError::MissingState {
                kind,
                name,
                written,
                location,
            } => write!(
                f,
                "the {kind} `{name}` (defined at {location}) takes `{written}`, which this server was not given: add `.state(value)` of that type to the server's builder"
            ),
            CatalogueError::ReservedMethod { name, problem } => write!(
                f,
                "the server's own method or notification `{name}` cannot have that name: {problem}; name it in a namespace of your own, e.g. `acme/{}`",
                name.rsplit('/').next().unwrap_or(name)
            ),
            CatalogueError::InvalidDynamicTool { name, problem } => {
                // Escaped: the name may be one a tool cannot have (a newline, a NUL).
                let name = name.escape_debug();
                write!(f, "the tool `{name}` cannot be served: {problem}")
            }
            CatalogueError::MadeTextLimit {
                kind,
                name,
                origin,
                limit,
            } => {
                let (from, of) = match origin {
                    Some(origin) => (format!(" of {origin}"), format!("the items of {origin}")),
                    None => (String::new(), "the items made at run time".to_owned()),
                };
                write!(
                    f,
                    "the {kind} `{name}`{from} is not served as it is: {of} already keep {} MiB of names and descriptions, the most they may (each version of an item is kept for the life of the process)",
                    limit / (1024 * 1024)
                )
            }
            CatalogueError::InvalidSkills { problem } => {
                write!(f, "the skills cannot be served: {problem}")
            }
            CatalogueError::DuplicateState { type_name } => write!(
                f,
                "two state values of type `{type_name}` were given to the builder: give each type once (wrap values of one type in types of their own to tell them apart)"
            ),
            CatalogueError::WeakRequestStateKey { which, bytes } => write!(
                f,
                "the {which} requestState key has {bytes} bytes; it must have at least {} \
                 (use 32 random bytes from a secret store, e.g. `openssl rand -base64 32`)",
                crate::server::MIN_STATE_KEY_BYTES
            ),
        }
    }
}

impl std::error::Error for CatalogueError {}

pub(crate) fn parse_meta(
    meta: Option<&'static str>,
    name: &'static str,
    location: SourceLocation,
) -> Result<Option<Map<String, Value>>, CatalogueError> {
    meta.map(|text| {
        serde_json::from_str::<Map<String, Value>>(text)
            .map_err(|_| CatalogueError::InvalidMeta { name, location })
    })
    .transpose()
}

pub(crate) fn wire_per_version(
    mut build: impl FnMut(ProtocolVersion) -> Map<String, Value>,
) -> [Box<RawValue>; 4] {
    ProtocolVersion::HANDSHAKE
        .map(|v| serde_json::value::to_raw_value(&build(v)).expect("a JSON map always serialises"))
}

pub(crate) fn insert_icons_and_meta(
    object: &mut Map<String, Value>,
    icons: &[Icon],
    meta: Option<&Map<String, Value>>,
    version: ProtocolVersion,
) {
    if !icons.is_empty() && version.has_icons() {
        object.insert(
            "icons".into(),
            serde_json::to_value(icons).unwrap_or_default(),
        );
    }
    if let Some(meta) = meta {
        object.insert("_meta".into(), Value::Object(meta.clone()));
    }
}

/// What the catalogue needs of each kind of built item.
pub(crate) trait CatalogueItem {
    const KIND: &'static str;
    /// The name (tools, prompts) or URI (resources) that identifies it.
    fn key(&self) -> &'static str;
    fn location(&self) -> SourceLocation;
    /// The address of its descriptor: the same descriptor registered twice is one item.
    fn identity(&self) -> usize;
    /// The types of state it takes.
    fn states(&self) -> &'static [crate::state::StateNeed];
}

/// Each kind of built item is identified by one field of its descriptor.
macro_rules! catalogue_item {
    ($($item:ty => $kind:literal, $key:ident;)*) => {$(
        impl CatalogueItem for $item {
            const KIND: &'static str = $kind;
            fn key(&self) -> &'static str {
                self.descriptor.$key
            }
            fn location(&self) -> SourceLocation {
                self.descriptor.location
            }
            fn identity(&self) -> usize {
                self.identity_of()
            }
            fn states(&self) -> &'static [crate::state::StateNeed] {
                self.descriptor.states
            }
        }
    )*};
}

impl CataloguePrompt {
    fn identity_of(&self) -> usize {
        match &self.handler {
            Some(handler) => std::sync::Arc::as_ptr(handler).cast::<()>() as usize,
            None => std::ptr::from_ref(self.descriptor) as usize,
        }
    }
}

impl CatalogueResource {
    fn identity_of(&self) -> usize {
        match &self.handler {
            Some(handler) => std::sync::Arc::as_ptr(handler).cast::<()>() as usize,
            None => std::ptr::from_ref(self.descriptor) as usize,
        }
    }
}

impl CatalogueTool {
    /// A tool made at run time is its call, which each registration makes anew (its
    /// descriptor may be shared with an earlier one of the same name).
    fn identity_of(&self) -> usize {
        match &self.handler {
            Some(handler) => std::sync::Arc::as_ptr(handler).cast::<()>() as usize,
            None => std::ptr::from_ref(self.descriptor) as usize,
        }
    }
}

catalogue_item! {
    CatalogueTool => "tool", name;
    CataloguePrompt => "prompt", name;
    CatalogueResource => "resource", uri;
}

/// Every item of one kind, enabled or not, sorted by key.
pub(crate) struct ItemList<T> {
    items: Vec<(Arc<T>, bool)>,
    /// The server's state values, which every item's `State<T>` parameters must find.
    states: States,
}

impl<T: CatalogueItem> ItemList<T> {
    fn new(states: &States) -> Self {
        ItemList {
            items: Vec::new(),
            states: states.clone(),
        }
    }

    /// Adds built items; the same descriptor twice is kept once, two with one key are refused,
    /// and so is one that takes a type of state the server was not given.
    pub(crate) fn add(&mut self, built: Vec<T>) -> Result<(), CatalogueError> {
        let mut next: Vec<(Arc<T>, bool)> = self.items.clone();
        let mut known: std::collections::HashSet<usize> =
            next.iter().map(|(i, _)| i.identity()).collect();
        for item in built {
            if !known.insert(item.identity()) {
                continue;
            }
            if let Some(need) = item
                .states()
                .iter()
                .find(|need| !self.states.has((need.type_id)()))
            {
                return Err(CatalogueError::MissingState {
                    kind: T::KIND,
                    name: item.key(),
                    written: need.written,
                    location: item.location(),
                });
            }
            next.push((Arc::new(item), true));
        }
        next.sort_by(|a, b| {
            a.0.key()
                .cmp(b.0.key())
                .then(a.0.location().line.cmp(&b.0.location().line))
        });
        if let Some(pair) = next.windows(2).find(|p| p[0].0.key() == p[1].0.key()) {
            return Err(CatalogueError::Duplicate {
                kind: T::KIND,
                name: pair[0].0.key(),
                first: pair[0].0.location(),
                second: pair[1].0.location(),
            });
        }
        self.items = next;
        Ok(())
    }

    /// Sets the enabled flag; returns whether the flag changed.
    pub(crate) fn set_enabled(&mut self, key: &str, enabled: bool) -> bool {
        match self.items.iter_mut().find(|(i, _)| i.key() == key) {
            Some((_, flag)) if *flag != enabled => {
                *flag = enabled;
                true
            }
            _ => false,
        }
    }

    /// Removes an item; returns whether it was there.
    pub(crate) fn remove(&mut self, key: &str) -> bool {
        let before = self.items.len();
        self.items.retain(|(i, _)| i.key() != key);
        self.items.len() != before
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items a session sees: the enabled ones, but where its overrides say otherwise.
    fn visible<'a>(
        &'a self,
        overrides: Option<&'a std::collections::BTreeMap<String, bool>>,
    ) -> impl Iterator<Item = &'a Arc<T>> {
        self.items
            .iter()
            .filter(move |(item, on)| {
                overrides
                    .and_then(|o| o.get(item.key()))
                    .copied()
                    .unwrap_or(*on)
            })
            .map(|(i, _)| i)
    }
}

/// Every item of a server, enabled or not.
pub(crate) struct Items {
    pub tools: ItemList<CatalogueTool>,
    pub prompts: ItemList<CataloguePrompt>,
    pub resources: ItemList<CatalogueResource>,
}

impl Items {
    pub(crate) fn new(states: &States) -> Self {
        Items {
            tools: ItemList::new(states),
            prompts: ItemList::new(states),
            resources: ItemList::new(states),
        }
    }

    /// Collects the automatically registered items (with the `auto-register` feature).
    pub(crate) fn add_registered(&mut self) -> Result<(), CatalogueError> {
        self.tools.add(build_all(
            inventory::iter::<ToolEntry>.into_iter().map(|e| e.0),
            CatalogueTool::build,
        )?)?;
        self.prompts.add(build_all(
            inventory::iter::<PromptEntry>.into_iter().map(|e| e.0),
            CataloguePrompt::build,
        )?)?;
        self.resources.add(build_all(
            inventory::iter::<ResourceEntry>.into_iter().map(|e| e.0),
            CatalogueResource::build,
        )?)
    }

    /// The catalogue of what is enabled now.
    pub(crate) fn snapshot(&self) -> Catalogue {
        self.snapshot_for(None)
    }

    /// The catalogue one session sees, through its own visibility (`None`: the server's).
    pub(crate) fn snapshot_for(&self, visibility: Option<&SessionVisibility>) -> Catalogue {
        let of = |kind| visibility.map(|v| v.of(kind));
        let tools: Vec<_> = self.tools.visible(of(ListKind::Tools)).cloned().collect();
        let prompts: Vec<_> = self
            .prompts
            .visible(of(ListKind::Prompts))
            .cloned()
            .collect();
        let (mut templates, resources): (Vec<_>, Vec<_>) = self
            .resources
            .visible(of(ListKind::Resources))
            .cloned()
            .partition(|r| r.is_template());
        // The documented order in which templates are tried: the longest literal prefix first
        // (the most specific), then by template text.
        templates.sort_by(|a, b| {
            b.template
                .literal_prefix_len()
                .cmp(&a.template.literal_prefix_len())
                .then_with(|| a.descriptor.uri.cmp(b.descriptor.uri))
        });
        let scoped = tools.iter().any(|t| !t.descriptor.scopes.is_empty())
            || prompts.iter().any(|p| !p.descriptor.scopes.is_empty())
            || resources
                .iter()
                .chain(&templates)
                .any(|r| !r.descriptor.scopes.is_empty());
        Catalogue {
            scoped,
            tool_index: index(&tools, |t| t.descriptor.name),
            prompt_index: index(&prompts, |p| p.descriptor.name),
            resource_index: index(&resources, |r| r.descriptor.uri),
            tools,
            prompts,
            resources,
            templates,
        }
    }
}

pub(crate) fn build_all<D: 'static + ?Sized, T>(
    descriptors: impl IntoIterator<Item = &'static D>,
    build: fn(&'static D) -> Result<T, CatalogueError>,
) -> Result<Vec<T>, CatalogueError> {
    descriptors.into_iter().map(build).collect()
}

fn index<T>(items: &[Arc<T>], key: impl Fn(&T) -> &'static str) -> HashMap<&'static str, usize> {
    items.iter().enumerate().map(|(i, t)| (key(t), i)).collect()
}

/// The enabled items of a server at one moment, immutable.
pub(crate) struct Catalogue {
    /// Whether some item requires OAuth scopes (`scopes(…)`).
    pub scoped: bool,
    pub tools: Vec<Arc<CatalogueTool>>,
    pub prompts: Vec<Arc<CataloguePrompt>>,
    /// Static resources, by URI.
    pub resources: Vec<Arc<CatalogueResource>>,
    /// Resource templates, in matching order.
    pub templates: Vec<Arc<CatalogueResource>>,
    tool_index: HashMap<&'static str, usize>,
    prompt_index: HashMap<&'static str, usize>,
    resource_index: HashMap<&'static str, usize>,
}

impl Catalogue {
    /// A tool by its name, or by the short name a profile's name-length limit gave it.
    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<CatalogueTool>> {
        self.tool_index
            .get(name)
            .map(|&i| &self.tools[i])
            .or_else(|| {
                self.tools
                    .iter()
                    .find(|t| crate::schema::is_short_name_of(name, t.descriptor.name))
            })
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&Arc<CataloguePrompt>> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    /// The resource a URI names: a static resource first, then the first template matching.
    pub(crate) fn resolve(&self, uri: &str) -> Option<(&Arc<CatalogueResource>, UriVariables)> {
        if let Some(&i) = self.resource_index.get(uri) {
            return Some((&self.resources[i], UriVariables::default()));
        }
        self.templates
            .iter()
            .find_map(|t| t.template.matches(uri).map(|vars| (t, vars)))
    }

    /// A resource or template by the exact URI or template text it was declared with.
    pub(crate) fn resource_by_declared_uri(&self, uri: &str) -> Option<&Arc<CatalogueResource>> {
        self.resource_index
            .get(uri)
            .map(|&i| &self.resources[i])
            .or_else(|| self.templates.iter().find(|t| t.descriptor.uri == uri))
    }
}
