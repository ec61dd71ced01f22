//! MCP protocol revisions and what each one allows.

/// A revision of the Model Context Protocol this server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// `2024-11-05`, the first (initialize handshake).
    V2024_11_05,
    /// `2025-03-26`: tool annotations, batches.
    V2025_03_26,
    /// `2025-06-18`: no batches; tool titles, `outputSchema`,
    /// `structuredContent`.
    V2025_06_18,
    /// `2025-11-25`: invalid tool arguments are tool execution errors.
    V2025_11_25,
    /// `2026-07-28`: no handshake and no sessions; every request carries
    /// its version in `_meta`; `server/discover`; `resultType`.
    V2026_07_28,
}

impl Revision {
    /// The revisions reached through the `initialize` handshake, oldest
    /// first.
    pub const LEGACY: [Revision; 4] =
        [Revision::V2024_11_05, Revision::V2025_03_26, Revision::V2025_06_18, Revision::V2025_11_25];

    /// The revisions of per-request `_meta` (no handshake).
    pub const MODERN: [Revision; 1] = [Revision::V2026_07_28];

    /// The newest revision of the handshake: what `initialize` answers when
    /// the client asks for one it does not know.
    pub const LATEST_LEGACY: Revision = Revision::V2025_11_25;

    /// The date that names the revision.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision named `name`, if this server speaks it.
    pub fn parse(name: &str) -> Option<Revision> {
        Self::LEGACY.into_iter().chain(Self::MODERN).find(|revision| revision.as_str() == name)
    }

    /// Whether it is a per-request (`_meta`) revision rather than a
    /// handshake one.
    pub fn is_modern(self) -> bool {
        self >= Revision::V2026_07_28
    }

    /// Whether JSON-RPC batches may be sent (2025-06-18 removed them).
    pub fn allows_batches(self) -> bool {
        self <= Revision::V2025_03_26
    }

    /// Whether tools carry `annotations`.
    pub(crate) fn has_annotations(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// Whether tools carry `title`, `outputSchema` and results
    /// `structuredContent`.
    pub(crate) fn has_structured_output(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether structured content must be an object (the handshake
    /// revisions); the modern one takes any value.
    pub(crate) fn wants_object_output(self) -> bool {
        !self.is_modern()
    }

    /// Whether invalid tool arguments are a tool execution error (a result
    /// with `isError`, which the model can read) rather than a protocol
    /// error (SEP-1303, from 2025-11-25).
    pub(crate) fn invalid_arguments_are_tool_errors(self) -> bool {
        self >= Revision::V2025_11_25
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Revision;

    #[test]
    fn revisions_parse_and_order() {
        for revision in Revision::LEGACY.into_iter().chain(Revision::MODERN) {
            assert_eq!(Revision::parse(revision.as_str()), Some(revision));
        }
        assert_eq!(Revision::parse("2025-01-01"), None);
        assert!(Revision::V2025_03_26.allows_batches());
        assert!(!Revision::V2025_06_18.allows_batches());
        assert!(!Revision::V2026_07_28.allows_batches());
        assert!(Revision::V2026_07_28.is_modern() && !Revision::V2025_11_25.is_modern());
    }
}
