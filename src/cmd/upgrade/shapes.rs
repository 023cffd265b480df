//! Which upstream events may be forwarded as they are, under aoitap's
//! envelope, and still conform (docs/contract.md §1.6): a 1.0 error or
//! warning in every member, an `aoi:check` of the spec's shape, an event
//! with no second `type` and no `aoi` member of its own. What is not is
//! rewritten as 1.0's, or kept whole as a `record`'s member (`forward.rs`).

use super::codes::code_is_valid;
use crate::check::rules::CATEGORIES;
use crate::json::{Event, Kind, Uint, Value};

/// The members a 1.0 `aoi:error` may carry (spec §8.1, §9.1).
const ERROR_MEMBERS: &[&str] = &[
    "type",
    "aoi",
    "category",
    "code",
    "message",
    "retryable",
    "retry_after_ms",
    "domain",
    "origin",
    "scope",
    "target",
    "item_index",
    "line_number",
    "field",
    "wrapped",
    "hint",
    "docs",
    "details",
    "properties",
];

/// The members a 1.0 `aoi:warning` may carry: an error's, less the retry
/// disposition a warning does not have.
const WARNING_MEMBERS: &[&str] = &[
    "type",
    "aoi",
    "category",
    "code",
    "message",
    "domain",
    "origin",
    "target",
    "item_index",
    "line_number",
    "field",
    "hint",
    "docs",
    "details",
    "properties",
];

/// The optional 1.0 members a rewritten error or warning copies as they
/// came, with the JSON kind each must have.
pub(super) const COPIED: &[(&str, Kind)] = &[
    ("domain", Kind::String),
    ("target", Kind::String),
    ("item_index", Kind::Number),
    ("line_number", Kind::Number),
    ("field", Kind::String),
    ("wrapped", Kind::Object),
    ("hint", Kind::String),
    ("docs", Kind::String),
    ("details", Kind::Object),
];

/// Whether `ev` can take aoitap's envelope as it is: its `type` at most
/// once, and no `aoi` member but its protocol's own envelope (`envelope`:
/// 1.x's, which goes). Otherwise two members of one name would stand in
/// the line, which no 1.0 reader takes.
pub(super) fn plain(ev: &Event<'_>, envelope: bool) -> bool {
    ev.count("type") <= 1 && ev.count("aoi") <= usize::from(envelope)
}

/// Whether every member name of `ev` is its own (framework events only:
/// the names are sorted, which a domain event is not worth).
pub(super) fn names_unique(ev: &Event<'_>) -> bool {
    let mut names: Vec<_> = ev.members().map(|(k, _)| k).collect();
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

/// An `aoi:check` of the spec's shape (§8.3): `name` and `ok`, and only
/// `severity`, `detail` and `properties` besides, each once.
pub(super) fn check_conforms(ev: &Event<'_>) -> bool {
    let known = ev.members().all(|(k, _)| {
        matches!(
            &*k,
            b"type" | b"aoi" | b"name" | b"ok" | b"severity" | b"detail" | b"properties"
        )
    });
    let kind = |k: &str, kind: Kind| ev.get(k).is_some_and(|v| v.kind() == kind);
    let optional = |k: &str, want: Kind| ev.get(k).is_none_or(|v| v.kind() == want);
    let severity = ev
        .get("severity")
        .is_none_or(|v| matches!(v.as_str().as_deref(), Some("error" | "warning" | "info")));
    known
        && names_unique(ev)
        && kind("name", Kind::String)
        && kind("ok", Kind::Bool)
        && severity
        && optional("detail", Kind::String)
        && optional("properties", Kind::Object)
}

/// Whether `v` may stand as the optional member `k` of kind `kind`: an
/// index or a line number is a count (a whole number, not negative).
pub(super) fn copied(k: &str, kind: Kind, v: Value<'_>) -> bool {
    match k {
        "item_index" | "line_number" => matches!(v.as_uint(), Uint::Int(_) | Uint::Huge),
        _ => v.kind() == kind,
    }
}

/// A 1.0 `aoi:error` or `aoi:warning` in every member (spec §9.1): only
/// its members, each of the kind it must be.
pub(super) fn conforms(ev: &Event<'_>, error: bool) -> bool {
    let allowed = if error {
        ERROR_MEMBERS
    } else {
        WARNING_MEMBERS
    };
    let mut all_known = true;
    for (k, _) in ev.members() {
        all_known &= std::str::from_utf8(&k).is_ok_and(|k| allowed.contains(&k));
    }
    let text = |k: &str| ev.get(k).and_then(|v| v.as_str());
    let code_ok = text("code").is_some_and(|c| code_is_valid(&c));
    let message_ok = text("message").is_some_and(|m| !m.contains(['\n', '\r', '\u{1b}']));
    let category_ok = match text("category") {
        Some(c) => CATEGORIES.contains(&&*c),
        None => !error && ev.get("category").is_none(),
    };
    let single = names_unique(ev);
    let kinds_ok = COPIED
        .iter()
        .all(|(k, kind)| ev.get(k).is_none_or(|v| copied(k, *kind, v)))
        && ev.get("origin").is_none_or(|v| v.kind() == Kind::String)
        && ev
            .get("properties")
            .is_none_or(|v| v.kind() == Kind::Object);
    let retry_ok = !error || {
        let retryable = ev.get("retryable").and_then(|v| v.as_bool());
        let after = ev.get("retry_after_ms");
        let scope = ev.get("scope");
        retryable.is_some()
            && match after {
                None => true,
                Some(v) => retryable == Some(true) && matches!(v.as_uint(), Uint::Int(_)),
            }
            && scope.is_none_or(|s| matches!(s.as_str().as_deref(), Some("process" | "item")))
    };
    all_known && code_ok && message_ok && category_ok && single && kinds_ok && retry_ok
}
