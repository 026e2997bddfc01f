//! Protocol revisions and what differs between them.
//!
//! Every `if version >= …` of the runtime lives here, as a named question about a revision, so
//! the differences between revisions can be read in one place.

use std::fmt;

/// A revision of the Model Context Protocol.
///
/// ```
/// use mcp_runtime::ProtocolVersion;
///
/// let v: ProtocolVersion = "2025-06-18".parse().unwrap();
/// assert_eq!(v, ProtocolVersion::V2025_06_18);
/// assert_eq!(v.as_str(), "2025-06-18");
/// assert!("1999-01-01".parse::<ProtocolVersion>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// The first published revision.
    V2024_11_05,
    /// Adds tool annotations, audio content, progress messages, JSON-RPC batches.
    V2025_03_26,
    /// Adds structured tool output, titles, resource links, elicitation; removes batches.
    V2025_06_18,
    /// Adds icons, tool-name rules, sampling with tools, URL elicitation, tasks.
    V2025_11_25,
}

impl ProtocolVersion {
    /// Every revision served with the `initialize` handshake, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest handshake-era revision: the answer to an `initialize` asking for one this
    /// server does not know.
    pub const LATEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision's date string, as it travels on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// A small dense index, for tables kept per revision.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// JSON-RPC batches (arrays of messages): only 2025-03-26 allows them.
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// `annotations` on tools (`readOnlyHint`, …), audio content and the `message` of progress.
    pub const fn has_tool_annotations(self) -> bool {
        !matches!(self, ProtocolVersion::V2024_11_05)
    }

    /// Audio content blocks.
    pub const fn has_audio(self) -> bool {
        self.has_tool_annotations()
    }

    /// `message` on `notifications/progress`.
    pub const fn has_progress_message(self) -> bool {
        self.has_tool_annotations()
    }

    /// `outputSchema` on tools and `structuredContent` on results.
    pub const fn has_structured_output(self) -> bool {
        matches!(
            self,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25
        )
    }

    /// `title` on tools, prompts, resources and implementations.
    pub const fn has_titles(self) -> bool {
        self.has_structured_output()
    }

    /// `resource_link` content blocks.
    pub const fn has_resource_links(self) -> bool {
        self.has_structured_output()
    }

    /// The `completions` capability (`completion/complete` itself exists in every revision).
    pub const fn has_completions(self) -> bool {
        self.has_tool_annotations()
    }

    /// `icons` and `websiteUrl`, and `description` on implementations.
    pub const fn has_icons(self) -> bool {
        matches!(self, ProtocolVersion::V2025_11_25)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown revision string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProtocolVersion(pub String);

impl fmt::Display for UnknownProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown protocol version `{}`", self.0)
    }
}

impl std::error::Error for UnknownProtocolVersion {}

impl std::str::FromStr for ProtocolVersion {
    type Err = UnknownProtocolVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::HANDSHAKE
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownProtocolVersion(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_revision_round_trips_through_its_string() {
        for v in ProtocolVersion::HANDSHAKE {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
        }
    }

    #[test]
    fn indices_are_dense() {
        for (i, v) in ProtocolVersion::HANDSHAKE.into_iter().enumerate() {
            assert_eq!(v.index(), i);
        }
    }

    #[test]
    fn only_2025_03_26_allows_batches() {
        let allowed: Vec<_> = ProtocolVersion::HANDSHAKE
            .into_iter()
            .filter(|v| v.allows_batches())
            .collect();
        assert_eq!(allowed, [ProtocolVersion::V2025_03_26]);
    }
}
