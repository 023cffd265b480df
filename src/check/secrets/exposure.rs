//! One exposed secret: where it is in the line, and what `--redact`
//! writes over it (docs/contract.md §10). Every part of `secrets/` that
//! finds one makes this value; `redaction.rs` writes it.

/// One exposed value and what `--redact` writes over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposure {
    /// The key path, `a.b[2].c_secret`.
    pub path: String,
    /// In a `_url` value (`secret.url-exposed`), not a `_secret` one.
    pub url: bool,
    /// Byte spans of the line to replace, in order, disjoint.
    pub spans: Vec<(usize, usize)>,
    /// Replace each span with `"***"` (a whole JSON value) or `***` (a
    /// span inside a URL string).
    pub whole: bool,
}

/// The redaction marker, as a JSON value and inside a string.
pub(super) const MARK: &[u8] = b"***";
