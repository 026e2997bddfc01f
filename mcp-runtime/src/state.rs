//! Typed application state: values given to the builder ([`ServerBuilder::state`]), which
//! handlers take as [`State<T>`] parameters. Each item's descriptor lists the types it takes
//! ([`StateNeed`]), so a server missing one is refused when it is built, never at a call.
//!
//! [`ServerBuilder::state`]: crate::ServerBuilder::state

use std::any::{Any, TypeId};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A value the server was given with [`ServerBuilder::state`](crate::ServerBuilder::state),
/// taken by a `#[tool]`, `#[prompt]` or `#[resource]` function as a parameter. Like
/// `Context`, it is recognised by its type (`State<…>`) and never enters the schema; it
/// dereferences to the value, which every call shares (its field is the `Arc` holding it, so
/// `State(db): State<Db>` destructures it as axum's `State` is).
///
/// A server whose handlers take a `State<T>` it was not given fails to build, naming the
/// handler and the type.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::State;
///
/// struct Greeting {
///     text: String,
/// }
///
/// /// Greet someone.
/// #[tool]
/// fn greet(greeting: State<Greeting>, name: String) -> String {
///     format!("{}, {name}!", greeting.text)
/// }
///
/// # #[mcp_runtime::main]
/// # async fn main() {
/// let server = mcp_runtime::server!()
///     .auto_register(false)
///     .tools(mcp_runtime::tools![greet])
///     .state(Greeting { text: "Hello".into() })
///     .build()
///     .unwrap();
/// let client = server.connect_memory();
/// client.initialize().await.unwrap();
/// let reply = client.call_tool("greet", serde_json::json!({"name": "Ada"})).await.unwrap();
/// assert_eq!(reply.content, vec![Content::text("Hello, Ada!")]);
/// # }
/// ```
pub struct State<T: ?Sized + Send + Sync + 'static>(pub Arc<T>);

impl<T: Send + Sync + 'static> State<T> {
    /// A state value of its own, for calling a handler directly in a unit test.
    ///
    /// ```
    /// let count = mcp_runtime::State::new(3_u32);
    /// assert_eq!(*count, 3);
    /// ```
    pub fn new(value: T) -> Self {
        State(Arc::new(value))
    }
}

impl<T: ?Sized + Send + Sync + 'static> State<T> {
    /// The shared value itself, to keep beyond the call.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }

    /// What generated code checks the server for: this type, by the name written.
    #[doc(hidden)]
    pub const fn __need(written: &'static str) -> StateNeed
    where
        T: Sized,
    {
        StateNeed {
            type_id: TypeId::of::<T>,
            written,
        }
    }
}

impl<T: ?Sized + Send + Sync + 'static> From<Arc<T>> for State<T> {
    fn from(value: Arc<T>) -> Self {
        State(value)
    }
}

impl<T: ?Sized + Send + Sync + 'static> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T: ?Sized + Send + Sync + 'static> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + Send + Sync + fmt::Debug + 'static> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// A type of state an item takes, as its descriptor lists it.
#[derive(Clone, Copy)]
pub struct StateNeed {
    /// The type's identity.
    pub type_id: fn() -> TypeId,
    /// The type as the function's signature writes it, for messages.
    pub written: &'static str,
}

impl fmt::Debug for StateNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.written)
    }
}

/// The state values of one server, by type. Few servers have more than a handful, so they
/// are a slice searched in order, which costs less than hashing the type.
#[derive(Clone, Default)]
pub(crate) struct States {
    values: Arc<[(TypeId, Arc<dyn Any + Send + Sync>)]>,
}

/// The values given to a builder, before they are checked.
#[derive(Default)]
pub(crate) struct StateValues {
    values: Vec<(TypeId, &'static str, Arc<dyn Any + Send + Sync>)>,
}

impl StateValues {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values
            .push((TypeId::of::<T>(), std::any::type_name::<T>(), value));
    }

    /// The states, or the name of a type given twice.
    pub(crate) fn finish(self) -> Result<States, &'static str> {
        let mut seen = Vec::with_capacity(self.values.len());
        for (id, name, _) in &self.values {
            if seen.contains(id) {
                return Err(name);
            }
            seen.push(*id);
        }
        Ok(States {
            values: self
                .values
                .into_iter()
                .map(|(id, _, value)| (id, value))
                .collect(),
        })
    }
}

impl States {
    pub(crate) fn has(&self, id: TypeId) -> bool {
        self.values.iter().any(|(t, _)| *t == id)
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        let id = TypeId::of::<T>();
        let (_, value) = self.values.iter().find(|(t, _)| *t == id)?;
        Arc::clone(value).downcast::<T>().ok().map(State)
    }
}

/// A type whose `impl` block is marked [`#[toolbox]`](crate::toolbox): its `#[tool]` methods
/// take `&self`, and [`ServerBuilder::toolbox`](crate::ServerBuilder::toolbox) serves them
/// with a value of the type. Implemented by the attribute, never by hand.
pub trait Toolbox: Send + Sync + 'static {
    /// The descriptors of the block's tools.
    #[doc(hidden)]
    fn __tools() -> Vec<&'static crate::registry::ToolDescriptor>;
}
