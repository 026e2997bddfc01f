//! What generated code refers to: the paths `#[tool]`, `#[prompt]`, `#[resource]` and
//! `#[mcp_runtime::main]` expand to (`::mcp_runtime::__private::…`). Not a public API: it
//! changes without notice.

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;
pub use tokio;

pub use crate::content::{CallToolResult, IntoToolResult};
pub use crate::context::Context;
#[cfg(not(feature = "http"))]
pub use crate::feature_hints::HttpFeatureEnabled;
pub use crate::protocol::CacheHint;
pub use crate::protocol::ToolAnnotations;
pub use crate::registry::{
    ArgumentFields, Arguments, SourceLocation, Tool, ToolDescriptor, ToolEntry, ToolFuture,
};
pub use crate::schema::SchemaProfile;
pub use crate::tasks::TaskSupport;

/// Runs the body of `#[mcp_runtime::main]` on the scheduler that serves the transport best.
///
/// Standard input and output are served fastest, and in the least memory, on the calling
/// thread alone: that is the runtime of every build without the `multi-thread` feature, and
/// of a build with it (every build with `http`) whose command line names no `--http`
/// address. With `--http ADDR` on the command line (what [`Server::serve`] reads) the body
/// runs on Tokio's multi-threaded scheduler; a server that calls
/// [`Server::serve_http`](crate::Server::serve_http) without the flag moves the HTTP
/// serving onto a multi-threaded scheduler of its own then.
///
/// [`Server::serve`]: crate::Server::serve
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    #[cfg(feature = "multi-thread")]
    let multi_thread = crate::server::http_requested();
    let mut builder = tokio::runtime::Builder::new_current_thread();
    #[cfg(feature = "multi-thread")]
    if multi_thread {
        builder = tokio::runtime::Builder::new_multi_thread();
    }
    let runtime = builder
        .enable_all()
        .build()
        .expect("the Tokio runtime cannot start");
    #[cfg(feature = "multi-thread")]
    if !multi_thread {
        SINGLE_THREADED_MAIN.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let output = runtime.block_on(future);
    // The transports gave the calls in flight their grace period already; a handler
    // blocking a thread past it must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    output
}

/// Whether `#[mcp_runtime::main]` chose one thread in a build that has the multi-threaded
/// scheduler (the command line named no HTTP address).
#[cfg(feature = "multi-thread")]
static SINGLE_THREADED_MAIN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether the caller runs on the one-thread runtime `#[mcp_runtime::main]` chose for lack
/// of an HTTP address on the command line: then HTTP is served on a multi-threaded
/// scheduler of its own.
#[cfg(feature = "http")]
pub(crate) fn on_single_threaded_main() -> bool {
    SINGLE_THREADED_MAIN.load(std::sync::atomic::Ordering::Relaxed)
        && tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread)
}

/// Reads a call's arguments into `A` (a free function, so it is one for every lifetime
/// of the message the arguments borrow from).
fn parse_arguments<A: serde::de::DeserializeOwned>(
    arguments: &Arguments<'_>,
    _names: &'static [&'static str],
) -> Result<A, CallToolResult> {
    arguments.parse()
}

/// Reads a call's arguments into the values of a tool's parameters, named `names`.
fn parse_fields<A: ArgumentFields>(
    arguments: &Arguments<'_>,
    names: &'static [&'static str],
) -> Result<A, CallToolResult> {
    arguments.parse_fields(names)
}

/// How a tool reads its arguments: their `inputSchema` and their parser.
///
/// Generated code builds it in one `const` from a function whose bounds check every
/// parameter type, so a type that cannot be an argument is reported once, on its own
/// token, and the table that describes the parameters adds no errors of its own.
pub struct ToolArguments<A> {
    schema: Described,
    read: fn(&Arguments<'_>, &'static [&'static str]) -> Result<A, CallToolResult>,
    /// The parameters' names, in the order of `A`'s values (none for an argument struct).
    names: &'static [&'static str],
}

impl<A> ToolArguments<A> {
    /// Deserialises the arguments of a call.
    pub fn parse(&self, arguments: &Arguments<'_>) -> Result<A, CallToolResult> {
        (self.read)(arguments, self.names)
    }

    /// The `inputSchema`.
    pub fn schema(&self) -> serde_json::Value {
        match self.schema {
            Described::Fields(fields) => schema_of_fields(fields),
            Described::Made(make) => make(),
        }
    }
}

/// Where a tool's `inputSchema` comes from.
enum Described {
    /// Its parameters' table.
    Fields(&'static [Field]),
    /// A function: an argument struct's schema, or a stand-in for one the tool gives.
    Made(fn() -> serde_json::Value),
}

impl<A: ArgumentFields> ToolArguments<A> {
    /// A tool's parameters, named `names`, read into their values (`A`) and described by
    /// `fields` (in the same order).
    pub const fn fields(names: &'static [&'static str], fields: &'static [Field]) -> Self {
        ToolArguments {
            schema: Described::Fields(fields),
            read: parse_fields::<A>,
            names,
        }
    }

    /// A tool's parameters, named `names`, whose schema the tool gives itself
    /// (`input_schema = …`): only read.
    pub const fn fields_parsed_only(names: &'static [&'static str]) -> Self {
        ToolArguments {
            schema: Described::Made(explicit_schema_elsewhere),
            read: parse_fields::<A>,
            names,
        }
    }
}

/// One parameter of a tool, as its input schema describes it: what a derived `JsonSchema`
/// of a struct with that field would say, made by code compiled once in the runtime from
/// this table rather than by a derive compiled for every tool.
pub struct Field {
    name: &'static str,
    /// Its doc comment, lines joined as every description the macros write.
    doc: &'static str,
    /// The schema of its type, as a property (a `$ref` for a type with a definition).
    schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// Whether a client may leave it out.
    optional: fn() -> bool,
    /// The HTTP header that mirrors it (`x-mcp-header`).
    header: Option<&'static str>,
    /// Its `#[default = …]`, as JSON.
    default: Option<fn() -> serde_json::Value>,
}

impl Field {
    /// A parameter of type `T`: required unless `T` is an `Option`.
    pub const fn of<T: ParameterSchema>(
        name: &'static str,
        doc: &'static str,
        header: Option<&'static str>,
    ) -> Field {
        Field {
            name,
            doc,
            schema: schemars::SchemaGenerator::subschema_for::<T>,
            optional: <T as schemars::JsonSchema>::_schemars_private_is_option,
            header,
            default: None,
        }
    }

    /// A parameter of type `T` with a default: never required, and the default shown.
    pub const fn defaulted<T: ParameterSchema>(
        name: &'static str,
        doc: &'static str,
        header: Option<&'static str>,
        default: fn() -> serde_json::Value,
    ) -> Field {
        Field {
            optional: always,
            default: Some(default),
            ..Field::of::<T>(name, doc, header)
        }
    }
}

fn always() -> bool {
    true
}

/// The title and description a doc comment gives a schema: a first line that is a Markdown
/// heading is the title, the rest the description (as schemars reads doc comments).
fn title_and_description(doc: &str) -> (&str, &str) {
    let doc = doc.trim_ascii();
    match doc.strip_prefix('#') {
        Some(_) => {
            let end = doc.find('\n').unwrap_or(doc.len());
            let title = doc[..end].trim_start_matches('#').trim_ascii();
            (title, doc[end..].trim_ascii())
        }
        None => ("", doc),
    }
}

/// The object schema of a tool's parameters, as schemars derives one for a struct of them.
fn describe_fields(
    fields: &[Field],
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    let mut object = serde_json::Map::new();
    object.insert("type".into(), "object".into());
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for field in fields {
        let mut schema = (field.schema)(generator);
        let (title, description) = title_and_description(field.doc);
        for (key, text) in [("title", title), ("description", description)] {
            if !text.is_empty() {
                schema.insert(key.into(), text.into());
            }
        }
        if let Some(header) = field.header {
            schema.insert("x-mcp-header".into(), header.into());
        }
        if let Some(default) = field.default {
            schema.insert("default".into(), default());
        }
        properties.insert(field.name.into(), schema.into());
        if !(generator.contract().is_deserialize() && (field.optional)()) {
            required.push(serde_json::Value::from(field.name));
        }
    }
    if !fields.is_empty() {
        object.insert("properties".into(), properties.into());
    }
    if !required.is_empty() {
        object.insert("required".into(), required.into());
    }
    object.into()
}

/// Stands in for the derived schema of a tool that gives its own; never sent.
fn explicit_schema_elsewhere() -> serde_json::Value {
    serde_json::Value::Null
}

/// The user's own struct as the whole argument object, with a schema given explicitly.
pub const fn argument_struct_parsed_only<A: ParameterDeserialize>() -> ToolArguments<A> {
    ToolArguments {
        schema: Described::Made(explicit_schema_elsewhere),
        read: parse_arguments::<A>,
        names: &[],
    }
}

/// The user's own struct as the whole argument object (`#[tool(args)]`).
pub const fn argument_struct<A: ParameterDeserialize + ParameterSchema>() -> ToolArguments<A> {
    ToolArguments {
        schema: Described::Made(struct_schema::<A>),
        read: parse_arguments::<A>,
        names: &[],
    }
}

std::thread_local! {
    static DESCRIBING: std::cell::Cell<&'static [Field]> = const { std::cell::Cell::new(&[]) };
}

/// The schema of a tool's parameters: closed, as the runtime refuses a property it does not
/// name, and without a title.
///
/// No code is compiled for each tool: the generator's root schema is made for one type of
/// the runtime's ([`Fields`]), which describes the parameters from their table, so the
/// schema is the one `into_root_schema_for` gives for a struct deriving `JsonSchema` with
/// those fields.
fn schema_of_fields(fields: &'static [Field]) -> serde_json::Value {
    /// Puts back what was being described before, also when describing panics.
    struct Restore(&'static [Field]);
    impl Drop for Restore {
        fn drop(&mut self) {
            DESCRIBING.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DESCRIBING.with(|d| d.replace(fields)));
    untitled_schema::<Fields>()
}

/// An argument type's schema without the type's name as its title.
fn untitled_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    let mut schema = struct_schema::<T>();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
    }
    schema
}

/// The parameters of the tool whose schema [`schema_of_fields`] is making.
struct Fields;

impl schemars::JsonSchema for Fields {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Arguments".into()
    }

    /// No parameter type's: schemars writes a subschema whose id is the root's as `#`.
    fn schema_id() -> std::borrow::Cow<'static, str> {
        "mcp_runtime::__private::Fields".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        describe_fields(DESCRIBING.with(std::cell::Cell::get), generator)
    }
}

/// The schema of an argument type: every object closed unless the type takes other
/// properties.
fn struct_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    let mut schema = crate::schema::input_schema_for::<T>();
    crate::schema::close_objects(&mut schema);
    schema
}

/// A parameter type's first requirement, checked at the parameter's own span.
#[diagnostic::on_unimplemented(
    message = "a tool parameter must implement `Deserialize`; `{Self}` does not",
    label = "the client's argument is deserialised into this type",
    note = "derive it on your type: `#[derive(mcp_runtime::serde::Deserialize)]` with `#[serde(crate = \"mcp_runtime::serde\")]`",
    note = "a `Context` or `State<…>` is recognised by the name written in the signature: behind a type alias or a macro it is taken for an argument, so write `State<…>` itself"
)]
pub trait ParameterDeserialize: serde::de::DeserializeOwned {}
impl<T: serde::de::DeserializeOwned> ParameterDeserialize for T {}

/// A parameter type's second requirement, checked at the parameter's own span.
#[diagnostic::on_unimplemented(
    message = "a tool parameter must implement `JsonSchema`; `{Self}` does not",
    label = "the tool's input schema describes this type",
    note = "derive it on your type: `#[derive(mcp_runtime::schemars::JsonSchema)]` with `#[schemars(crate = \"mcp_runtime::schemars\")]`",
    note = "a `Context` or `State<…>` is recognised by the name written in the signature: behind a type alias or a macro it is taken for an argument, so write `State<…>` itself"
)]
pub trait ParameterSchema: schemars::JsonSchema {}
impl<T: schemars::JsonSchema> ParameterSchema for T {}

/// Whether the future of an async tool is `Send`, found by method resolution (autoref
/// specialisation): [`IsSendFuture::future_kind`] when it is, else
/// [`IsNotSendFuture::future_kind`]. The answer is a type, checked by [`send_tool_future`],
/// so a future that is not `Send` is one error naming the tool and the fix, on the
/// function's name, rather than rustc's "future cannot be sent between threads safely" at
/// the attribute.
pub struct SendCheck<Tool, F>(std::marker::PhantomData<fn() -> (Tool, F)>);

/// The [`SendCheck`] of a tool's future.
pub fn send_check<Tool, F>(_future: &F) -> SendCheck<Tool, F> {
    SendCheck(std::marker::PhantomData)
}

/// The answer for a future that is `Send`.
pub struct SendFuture<F>(std::marker::PhantomData<fn() -> F>);

/// The answer for a future that is not.
pub struct NotSendFuture<F>(std::marker::PhantomData<fn() -> F>);

/// Chosen when the future is `Send`.
pub trait IsSendFuture<F> {
    /// The answer.
    fn future_kind(&self) -> SendFuture<F> {
        SendFuture(std::marker::PhantomData)
    }
}
impl<Tool, F: Send> IsSendFuture<F> for SendCheck<Tool, F> {}

/// Chosen otherwise.
pub trait IsNotSendFuture<F> {
    /// The answer.
    fn future_kind(&self) -> NotSendFuture<F> {
        NotSendFuture(std::marker::PhantomData)
    }
}
impl<Tool, F> IsNotSendFuture<F> for &SendCheck<Tool, F> {}

/// What [`send_tool_future`] requires of the answer.
#[diagnostic::on_unimplemented(
    message = "the async tool `{Tool}` holds a value that is not `Send` across an `.await`",
    label = "the future of `{Tool}` is not `Send`: the server runs tool calls on any of its threads",
    note = "a `std::sync::MutexGuard`, an `Rc` or a `RefCell` borrow alive at an `.await` makes the future not `Send`: end its scope (or `drop` it) before the `.await`, or use `tokio::sync::Mutex`, whose guard may be held across one",
    note = "the book's chapter \"Debugging macro errors\" shows this case"
)]
pub trait ToolFutureIsSend<Tool> {
    /// The future, now known to be `Send`.
    type Future: std::future::Future + Send;
}
impl<Tool, F: std::future::Future + Send> ToolFutureIsSend<Tool> for SendFuture<F> {
    type Future = F;
}

/// The future of an async tool, once [`SendCheck`] has found it `Send`.
pub fn send_tool_future<Tool, K: ToolFutureIsSend<Tool>>(_kind: K, future: K::Future) -> K::Future {
    future
}

/// Whether a `#[tool(args)]` type is known not to be an object (a `Vec`, a `String`, a
/// number…), found by method resolution as for [`SendCheck`]: such a type is refused at
/// compile time on its own token, rather than when the server starts.
pub struct ArgumentsCheck<T>(std::marker::PhantomData<fn() -> T>);

impl<T> ArgumentsCheck<T> {
    /// The check of `T`.
    pub const fn new() -> Self {
        ArgumentsCheck(std::marker::PhantomData)
    }
}

impl<T> Default for ArgumentsCheck<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The answer for a type known not to be an object.
pub struct NotAnObject;
/// The answer for any other type (a struct, as far as the macro can tell).
pub struct MaybeAnObject;

/// Chosen for types whose schema is known not to describe an object.
pub trait IsNotAnObject {
    /// The answer.
    fn object_kind(&self) -> NotAnObject {
        NotAnObject
    }
}
impl<T: NotAnArgumentObject> IsNotAnObject for ArgumentsCheck<T> {}

/// Chosen otherwise.
pub trait IsMaybeAnObject {
    /// The answer.
    fn object_kind(&self) -> MaybeAnObject {
        MaybeAnObject
    }
}
impl<T> IsMaybeAnObject for &ArgumentsCheck<T> {}

/// Types whose JSON Schema is never an object with named properties.
pub trait NotAnArgumentObject {}
macro_rules! not_an_object {
    ($($ty:ty),* $(,)?) => {$(impl NotAnArgumentObject for $ty {})*};
}
not_an_object!(
    bool,
    char,
    String,
    str,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    (),
    serde_json::Value,
    std::path::PathBuf,
);
impl<T> NotAnArgumentObject for Vec<T> {}
impl<T> NotAnArgumentObject for std::collections::VecDeque<T> {}
impl<T> NotAnArgumentObject for std::collections::HashSet<T> {}
impl<T> NotAnArgumentObject for std::collections::BTreeSet<T> {}
impl<T> NotAnArgumentObject for Option<T> {}
impl<T, const N: usize> NotAnArgumentObject for [T; N] {}
impl<T: NotAnArgumentObject + ?Sized> NotAnArgumentObject for Box<T> {}
impl<A, B> NotAnArgumentObject for (A, B) {}
impl<A, B, C> NotAnArgumentObject for (A, B, C) {}

/// What `#[tool(args)]` requires of a type, given the answer of its [`ArgumentsCheck`].
/// The type is `Self`, so rustc reports the unmet bound on the type as written.
#[diagnostic::on_unimplemented(
    message = "`#[tool(args)]` takes a struct with named fields, the whole argument object; `{Self}` is not one",
    label = "a tool's arguments are always an object of named arguments",
    note = "remove `args` to make this parameter one argument of that name, or take a struct that derives `Deserialize` and `JsonSchema`"
)]
pub trait ArgumentObject<Answer> {}
impl<T: ?Sized> ArgumentObject<MaybeAnObject> for T {}
// A second answer that is never given, so rustc reads the answer from the argument rather
// than inferring it from the only impl (which would make a refusal a type mismatch).
impl<T: ?Sized> ArgumentObject<NeverAnAnswer> for T {}

/// No value has this type: see [`ArgumentObject`].
pub enum NeverAnAnswer {}

/// Checks the answer of an [`ArgumentsCheck`].
pub fn argument_object<T: ArgumentObject<K>, K>(_kind: K) {}

/// How a tool's return value becomes its result: the `outputSchema` and the conversion.
pub struct ToolOutput<R> {
    /// Builds the `outputSchema`, for structured output.
    pub output_schema: fn() -> Option<serde_json::Value>,
    /// Converts the return value.
    pub into_tool_result: fn(R) -> CallToolResult,
}

/// Checks the return type once, at its own span (see [`ToolArguments`]).
pub const fn tool_output<R: ToolReturn>() -> ToolOutput<R> {
    ToolOutput {
        output_schema: R::output_schema,
        into_tool_result: R::into_tool_result,
    }
}

/// The requirement on a return type, with a message that lists what a tool may return.
#[diagnostic::on_unimplemented(
    message = "a tool's return type must convert into a tool result; `{Self}` does not",
    label = "this type does not implement `IntoToolResult`",
    note = "return text, a number, `bool`, `()`, `Json<T>`, content (`Content`, `Vec<Content>`, `Image`, `Audio`, `ResourceLink`, `EmbeddedResource`), `CallToolResult`, or an `Option` or `Result` of one of these",
    note = "for structured output, derive `Serialize` and `JsonSchema` on your type and return it wrapped in `Json`"
)]
pub trait ToolReturn: IntoToolResult {}
impl<T: IntoToolResult> ToolReturn for T {}

/// Registers a tool with the automatic registry (when the `auto-register` feature is on).
#[cfg(feature = "auto-register")]
#[macro_export]
#[doc(hidden)]
macro_rules! __submit_tool {
    ($descriptor:expr) => {
        $crate::__private::inventory::submit! { $crate::__private::ToolEntry($descriptor) }
    };
}

/// Registers a tool with the automatic registry (when the `auto-register` feature is on).
#[cfg(not(feature = "auto-register"))]
#[macro_export]
#[doc(hidden)]
macro_rules! __submit_tool {
    ($descriptor:expr) => {};
}

pub use crate::__submit_tool as submit_tool;

pub use crate::completion::{Completer, Completion, CompletionContext};
pub use crate::content::Role;
pub use crate::prompt::{IntoPromptResult, PromptArguments};
pub use crate::protocol::RpcError;
pub use crate::registry::{
    CompletionDescriptor, Icon, Prompt, PromptArgumentDescriptor, PromptDescriptor, PromptEntry,
    PromptFuture, ResourceDescriptor, ResourceEntry, ResourceFuture, ResourceItem, ResourceRequest,
};
pub use crate::resource::{IntoResourceContents, IntoResourceList, Resource};

use crate::content::ResourceContents;
use crate::prompt::GetPromptResult;

/// The conversion of a prompt's return value into its result.
pub type PromptOutput<R> = fn(R) -> Result<GetPromptResult, RpcError>;

/// Checks a prompt's return type once, as the type argument of this function, so an
/// unfit type is reported on its own token (see [`ToolArguments`]).
pub const fn prompt_output<R: IntoPromptResult>() -> PromptOutput<R> {
    R::into_prompt_result
}

/// The conversion of a resource's return value into its contents, given the URI read and
/// the MIME type.
pub type IntoContents<R> = fn(R, &str, Option<&str>) -> Result<Vec<ResourceContents>, RpcError>;

/// How a resource's return value becomes its contents: the conversion, and the MIME type
/// it is read and listed with.
pub struct ResourceOutput<R> {
    /// Converts the return value.
    pub into_contents: IntoContents<R>,
    /// The declared MIME type, or else the one the return type always reads as
    /// (`application/json` for `Json<T>`), so `resources/list` says what a read returns.
    pub mime_type: Option<&'static str>,
}

/// Checks a resource's return type once, as the type argument of this function, so an
/// unfit type is reported on its own token (see [`ToolArguments`]).
pub const fn resource_output<R: IntoResourceContents>(
    declared: Option<&'static str>,
) -> ResourceOutput<R> {
    ResourceOutput {
        into_contents: R::into_contents,
        mime_type: match declared {
            Some(mime) => Some(mime),
            None => R::MIME_TYPE,
        },
    }
}

/// A resource template's `list = function`, checked at the function's path.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a resource `list` function",
    label = "expected `fn() -> Vec<Resource>` or `fn() -> Result<Vec<Resource>, E>`",
    note = "a `list` function takes no arguments and returns the template's concrete resources, for `resources/list`"
)]
pub trait ListFunction {
    /// Calls the function and converts its entries.
    fn list(&self) -> Result<Vec<Resource>, RpcError>;
}

impl<F, R> ListFunction for F
where
    F: Fn() -> R,
    R: IntoResourceList,
{
    fn list(&self) -> Result<Vec<Resource>, RpcError> {
        self().into_resource_list()
    }
}

/// Reads prompt arguments and URI-template variables, which travel as text, into the
/// parameter types, checked at each parameter's own span. The error type is a parameter of
/// its own, so that an error type without `Display` is reported as such.
pub struct TextArgument;

impl TextArgument {
    /// A required argument.
    pub fn required<T: FromText<Error = E>, E: TextError>(
        args: &PromptArguments,
        name: &str,
    ) -> Result<T, RpcError> {
        args.required_with(name, T::from_text)
    }

    /// An optional argument.
    pub fn optional<T: FromText<Error = E>, E: TextError>(
        args: &PromptArguments,
        name: &str,
    ) -> Result<Option<T>, RpcError> {
        args.optional_with(name, T::from_text)
    }
}

/// What a prompt argument or URI variable type needs: parsing from text.
#[diagnostic::on_unimplemented(
    message = "a prompt argument or URI variable must implement `FromStr`; `{Self}` does not",
    label = "its text is parsed into this type",
    note = "arguments travel as text: take a `String`, a number, or implement `std::str::FromStr` (with an error that implements `Display`) for your type"
)]
pub trait FromText: Sized {
    /// `FromStr::Err`.
    type Error;
    /// `FromStr::from_str`.
    fn from_text(text: &str) -> Result<Self, Self::Error>;
}

impl<T: std::str::FromStr> FromText for T {
    type Error = T::Err;
    fn from_text(text: &str) -> Result<Self, Self::Error> {
        text.parse()
    }
}

/// What the `FromStr` error of a prompt argument or URI variable needs: a message for the
/// client.
#[diagnostic::on_unimplemented(
    message = "the `FromStr` error of a prompt argument or URI variable must implement `Display`; `{Self}` does not",
    label = "text that does not parse into this type is answered with the error's `Display`",
    note = "implement `std::fmt::Display` for `{Self}`, or use an error type that has it, such as `String`"
)]
pub trait TextError: std::fmt::Display {}
impl<E: std::fmt::Display> TextError for E {}

/// Registers a prompt or resource with the automatic registry (when the `auto-register`
/// feature is on).
#[cfg(feature = "auto-register")]
#[macro_export]
#[doc(hidden)]
macro_rules! __submit {
    ($entry:expr) => {
        $crate::__private::inventory::submit! { $entry }
    };
}

/// Registers a prompt or resource with the automatic registry (when the `auto-register`
/// feature is on).
#[cfg(not(feature = "auto-register"))]
#[macro_export]
#[doc(hidden)]
macro_rules! __submit {
    ($entry:expr) => {};
}

pub use crate::__submit as submit;

pub use crate::state::{State, StateNeed, Toolbox};

/// The state value a handler's `State<T>` (or a toolbox method's `&self`) takes.
pub fn state_of<T: Send + Sync + 'static>(ctx: &Context) -> Result<State<T>, RpcError> {
    ctx.state::<T>().ok_or_else(|| {
        RpcError::internal(format!(
            "the server holds no `{}`",
            std::any::type_name::<T>()
        ))
    })
}

/// A tool call whose state is missing (only a context made outside a server can lack it).
pub fn state_missing(error: RpcError) -> CallToolResult {
    CallToolResult::error(error.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a tool's parameters were described by before they had a table: the schema of a
    /// struct of them deriving `JsonSchema`, without its title.
    fn derived<T: schemars::JsonSchema>() -> serde_json::Value {
        untitled_schema::<T>()
    }

    fn ten() -> serde_json::Value {
        serde_json::json!(10)
    }

    fn metric() -> serde_json::Value {
        serde_json::json!("metric")
    }

    #[test]
    fn a_tools_parameters_are_described_as_a_struct_of_them_derives_it() {
        /// A tree.
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Node {
            /// Its label.
            label: String,
            children: Vec<Node>,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        enum Unit {
            Metric,
            Imperial,
        }
        // What `#[tool]` derived for a tool's parameters, field for field, before the table.
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        // Generic over every type, as the macro's struct was: a field of a concrete type
        // gets a `"default": null` from schemars first, which places the key elsewhere.
        struct Params<A, B, C, D, E> {
            /// How many.
            ///
            /// At least one.
            count: A,
            #[schemars(extend("x-mcp-header" = "Unit"))]
            unit: Option<B>,
            /// # The tree
            ///
            /// Its root.
            tree: Node,
            ///   Indented  
            again: Node,
            map: std::collections::BTreeMap<String, Vec<Unit>>,
            /// At most this many.
            #[serde(default = "::core::option::Option::<C>::default")]
            #[schemars(with = "C", extend("default" = 10))]
            limit: Option<C>,
            /// The unit to answer in.
            #[schemars(extend("x-mcp-header" = "Answer-Unit"))]
            #[serde(default = "::core::option::Option::<D>::default")]
            #[schemars(with = "D", extend("default" = "metric"))]
            answer: Option<D>,
            #[schemars(extend("x-mcp-header" = "Maybe"))]
            maybe: Option<Option<E>>,
        }
        static FIELDS: &[Field] = &[
            Field::of::<u32>("count", "How many.\n\nAt least one.", None),
            Field::of::<Option<Unit>>("unit", "", Some("Unit")),
            Field::of::<Node>("tree", "# The tree\n\nIts root.", None),
            Field::of::<Node>("again", "  Indented  ", None),
            Field::of::<std::collections::BTreeMap<String, Vec<Unit>>>("map", "", None),
            Field::defaulted::<u32>("limit", "At most this many.", None, ten),
            Field::defaulted::<String>(
                "answer",
                "The unit to answer in.",
                Some("Answer-Unit"),
                metric,
            ),
            Field::of::<Option<Option<u32>>>("maybe", "", Some("Maybe")),
        ];
        #[derive(schemars::JsonSchema)]
        struct Empty {}
        let cases = [
            (
                derived::<Params<u32, Unit, u32, String, u32>>(),
                schema_of_fields(FIELDS),
            ),
            (derived::<Empty>(), schema_of_fields(&[])),
        ];
        for (expected, made) in &cases {
            assert_eq!(made.to_string(), expected.to_string());
        }
        let params = &cases[0].0;
        assert!(params["$defs"]["Node"].is_object(), "{params}");
        assert_eq!(
            params["properties"]["tree"]["title"], "The tree",
            "{params}"
        );
        assert_eq!(params["properties"]["answer"]["default"], "metric");
        assert_eq!(
            params["required"],
            serde_json::json!(["count", "tree", "again", "map"])
        );
    }
}
