//! Completions of prompt arguments and resource-template variables (`completion/complete`).

use std::collections::HashMap;

use serde::Serialize;

/// The most values one completion may return, as the specification limits it.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What a completion function is asked: the argument, what the user typed so far, and the
/// arguments already resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompletionContext {
    /// The name of the argument (or template variable) being completed.
    pub argument: String,
    /// What has been typed so far.
    pub value: String,
    /// Other arguments the client has already resolved (`context.arguments`).
    pub arguments: HashMap<String, String>,
}

/// The answer of a completion function.
///
/// ```
/// use mcp_runtime::Completion;
///
/// let c = Completion::from_matches((0..150).map(|i| i.to_string()));
/// assert_eq!(c.values.len(), 100);
/// assert_eq!(c.total, Some(150));
/// assert!(c.has_more);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values, at most [`MAX_COMPLETION_VALUES`].
    pub values: Vec<String>,
    /// How many values exist in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were returned.
    pub has_more: bool,
}

impl Completion {
    /// Every match, of which the first [`MAX_COMPLETION_VALUES`] are sent, with `total` and
    /// `hasMore` set accordingly.
    pub fn from_matches(matches: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = matches.into_iter().collect();
        let total = values.len();
        values.truncate(MAX_COMPLETION_VALUES);
        Completion {
            has_more: total > values.len(),
            total: Some(total as u64),
            values,
        }
    }

    /// Keeps at most [`MAX_COMPLETION_VALUES`] values, marking that more exist.
    pub(crate) fn bounded(mut self) -> Self {
        if self.values.len() > MAX_COMPLETION_VALUES {
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.has_more = true;
        }
        self
    }
}

/// What a completion function may return: `Vec<String>` (every match) or a [`Completion`].
pub trait IntoCompletion {
    /// Converts the value.
    fn into_completion(self) -> Completion;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Completion {
        self
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Completion {
        Completion::from_matches(self)
    }
}

impl IntoCompletion for Vec<&str> {
    fn into_completion(self) -> Completion {
        Completion::from_matches(self.into_iter().map(str::to_owned))
    }
}

/// A function usable as a completion: `fn(&str) -> R` (given what was typed) or
/// `fn(&str, &CompletionContext) -> R`, where `R` is `Vec<String>` or [`Completion`].
///
/// ```
/// use mcp_runtime::{Completer, CompletionContext};
///
/// fn languages(prefix: &str) -> Vec<String> {
///     ["rust", "ruby", "python"].into_iter().filter(|l| l.starts_with(prefix)).map(String::from).collect()
/// }
///
/// let cx = CompletionContext { value: "ru".into(), ..Default::default() };
/// assert_eq!(languages.complete(&cx).values, ["rust", "ruby"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a completion function",
    label = "expected `fn(&str) -> Vec<String>` or `fn(&str, &CompletionContext) -> Vec<String>`",
    note = "a completion function is given what the user typed so far (and, if it takes them, the arguments already chosen) and returns the matches as `Vec<String>` or as a `Completion`"
)]
pub trait Completer<Marker> {
    /// Completes the value in `context`.
    fn complete(&self, context: &CompletionContext) -> Completion;
}

#[doc(hidden)]
pub struct ValueOnly<R>(std::marker::PhantomData<R>);
#[doc(hidden)]
pub struct WithContext<R>(std::marker::PhantomData<R>);

impl<F, R> Completer<ValueOnly<R>> for F
where
    F: Fn(&str) -> R,
    R: IntoCompletion,
{
    fn complete(&self, context: &CompletionContext) -> Completion {
        self(&context.value).into_completion().bounded()
    }
}

impl<F, R> Completer<WithContext<R>> for F
where
    F: Fn(&str, &CompletionContext) -> R,
    R: IntoCompletion,
{
    fn complete(&self, context: &CompletionContext) -> Completion {
        self(&context.value, context).into_completion().bounded()
    }
}
