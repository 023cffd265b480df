//! One exposed secret: where it is in the line, and what `--redact`
//! writes over it (docs/contract.md §7.1). Every part of `secrets/` that
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

impl Exposure {
    /// Its first span begins before byte `at`.
    pub(crate) fn starts_before(&self, at: usize) -> bool {
        self.spans.first().is_some_and(|s| s.0 < at)
    }

    /// Placed `by` bytes further on (an element's exposure, in its
    /// document).
    pub(crate) fn moved_on(mut self, by: usize) -> Exposure {
        for span in &mut self.spans {
            *span = (span.0 + by, span.1 + by);
        }
        self
    }

    /// Placed `by` bytes further back (a document's exposure, in its
    /// element).
    pub(crate) fn moved_back(&self, by: usize) -> Exposure {
        let mut e = self.clone();
        for span in &mut e.spans {
            *span = (span.0 - by, span.1 - by);
        }
        e
    }
}

/// The redaction marker, as a JSON value and inside a string.
pub(super) const MARK: &[u8] = b"***";
