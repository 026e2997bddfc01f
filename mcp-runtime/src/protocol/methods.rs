//! Every method the server answers, written down once: its name, the capability the server
//! must have declared for it, the eras that have it, the parameter its `Mcp-Name` header
//! mirrors, and the list it fetches. Dispatch, the stateless era, the HTTP header checks and
//! `list_changed` coalescing all read this table; a new method is a new row.

/// A method the server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Method {
    Initialize,
    Ping,
    ServerDiscover,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    CompletionComplete,
    LoggingSetLevel,
    SubscriptionsListen,
    TasksGet,
    TasksUpdate,
    TasksCancel,
    SkillsList,
    SkillsGet,
    ResourcesDirectoryRead,
    /// A method of the server's own (`ServerBuilder::method`), in both eras.
    Custom,
}

/// What the server must serve for a method to exist at all (otherwise it is -32601).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Needs {
    Nothing,
    Tools,
    Prompts,
    Resources,
    /// Completions complete prompt arguments and template variables.
    PromptsOrResources,
    /// A tool that may run as a task (the tasks extension).
    Tasks,
    /// Skills (the skills extension).
    Skills,
}

/// The lists a client fetches and is told have changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Prompts,
    Resources,
}

impl ListKind {
    pub(crate) const ALL: [ListKind; 3] = [ListKind::Tools, ListKind::Prompts, ListKind::Resources];

    /// The kind as one bit of a set of kinds.
    pub(crate) const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The notification that says the list changed.
    pub(crate) const fn notification(self) -> &'static str {
        match self {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        }
    }
}

/// Every kind, as a set of bits.
pub(crate) const ALL_LISTS: u8 =
    ListKind::Tools.bit() | ListKind::Prompts.bit() | ListKind::Resources.bit();

/// One row of the table.
struct Row {
    method: Method,
    name: &'static str,
    needs: Needs,
    /// Served in the handshake era (2024-11-05 to 2025-11-25).
    handshake: bool,
    /// Served in the stateless era (2026-07-28).
    stateless: bool,
    /// The parameter an HTTP `Mcp-Name` header mirrors (read by the HTTP transport).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    target: Option<&'static str>,
    /// The list it fetches.
    fetches: Option<ListKind>,
}

const fn row(method: Method, name: &'static str, needs: Needs) -> Row {
    Row {
        method,
        name,
        needs,
        handshake: true,
        stateless: true,
        target: None,
        fetches: None,
    }
}

impl Row {
    const fn handshake_only(self) -> Row {
        Row {
            stateless: false,
            ..self
        }
    }

    const fn stateless_only(self) -> Row {
        Row {
            handshake: false,
            ..self
        }
    }

    const fn target(self, parameter: &'static str) -> Row {
        Row {
            target: Some(parameter),
            ..self
        }
    }

    const fn fetches(self, list: ListKind) -> Row {
        Row {
            fetches: Some(list),
            ..self
        }
    }
}

use Method as M;
use Needs as N;

const TABLE: [Row; 22] = [
    row(M::Initialize, "initialize", N::Nothing).handshake_only(),
    // `ping` went with the handshake: a stateless request stands alone.
    row(M::Ping, "ping", N::Nothing).handshake_only(),
    row(M::ServerDiscover, "server/discover", N::Nothing).stateless_only(),
    row(M::ToolsList, "tools/list", N::Tools).fetches(ListKind::Tools),
    row(M::ToolsCall, "tools/call", N::Tools).target("name"),
    row(M::PromptsList, "prompts/list", N::Prompts).fetches(ListKind::Prompts),
    row(M::PromptsGet, "prompts/get", N::Prompts).target("name"),
    row(M::ResourcesList, "resources/list", N::Resources).fetches(ListKind::Resources),
    row(
        M::ResourceTemplatesList,
        "resources/templates/list",
        N::Resources,
    )
    .fetches(ListKind::Resources),
    row(M::ResourcesRead, "resources/read", N::Resources).target("uri"),
    // `subscriptions/listen` replaces subscribing in the stateless era.
    row(M::ResourcesSubscribe, "resources/subscribe", N::Resources).handshake_only(),
    row(
        M::ResourcesUnsubscribe,
        "resources/unsubscribe",
        N::Resources,
    )
    .handshake_only(),
    row(
        M::CompletionComplete,
        "completion/complete",
        N::PromptsOrResources,
    ),
    // A stateless request names its log level in `_meta`.
    row(M::LoggingSetLevel, "logging/setLevel", N::Nothing).handshake_only(),
    row(M::SubscriptionsListen, "subscriptions/listen", N::Nothing).stateless_only(),
    // The tasks extension routes by task (SEP-2663).
    row(M::TasksGet, "tasks/get", N::Tasks)
        .stateless_only()
        .target("taskId"),
    row(M::TasksUpdate, "tasks/update", N::Tasks)
        .stateless_only()
        .target("taskId"),
    row(M::TasksCancel, "tasks/cancel", N::Tasks)
        .stateless_only()
        .target("taskId"),
    // The skills extension (SEP-2640).
    row(M::SkillsList, "skills/list", N::Skills),
    row(M::SkillsGet, "skills/get", N::Skills),
    row(
        M::ResourcesDirectoryRead,
        "resources/directory/read",
        N::Skills,
    ),
    // Named by the server (`Request::name`); never parsed from a name.
    row(M::Custom, "", N::Nothing),
];

impl Method {
    /// The method of a name, if the server knows it at all.
    pub(crate) fn parse(name: &str) -> Option<Method> {
        TABLE
            .iter()
            .find(|r| r.name == name && r.method != Method::Custom)
            .map(|r| r.method)
    }

    fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    /// The method's name on the wire.
    pub(crate) fn name(self) -> &'static str {
        self.row().name
    }

    /// What the server must serve for the method to exist.
    pub(crate) fn needs(self) -> Needs {
        self.row().needs
    }

    /// Whether the handshake era has the method.
    pub(crate) fn in_handshake(self) -> bool {
        self.row().handshake
    }

    /// Whether the stateless era has the method.
    pub(crate) fn in_stateless(self) -> bool {
        self.row().stateless
    }

    /// The parameter a stateless HTTP request's `Mcp-Name` header mirrors.
    #[cfg(feature = "http")]
    pub(crate) fn target(self) -> Option<&'static str> {
        self.row().target
    }

    /// The list the method fetches.
    pub(crate) fn fetches(self) -> Option<ListKind> {
        self.row().fetches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_stands_where_its_method_points() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.method as usize, i, "{}", row.name);
            if row.method != Method::Custom {
                assert_eq!(Method::parse(row.name), Some(row.method));
            }
        }
        assert_eq!(Method::parse("tools/cal"), None);
        assert_eq!(Method::parse(""), None);
    }

    #[test]
    fn list_kinds_are_distinct_bits() {
        let all = ListKind::ALL.iter().fold(0, |bits, kind| bits | kind.bit());
        assert_eq!(all.count_ones(), 3);
        assert_eq!(
            Method::ResourceTemplatesList.fetches(),
            Some(ListKind::Resources)
        );
    }
}
