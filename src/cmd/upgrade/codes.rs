//! Codes and categories as AOI 1.0 has them (spec §9.1, §9.2): what an
//! upstream's own become when `upgrade` forwards its errors, and when
//! its summary carries their retry fields in `caused_by`.

use std::borrow::Cow;

use crate::check::rules::CATEGORIES;
pub use crate::check::rules::{code_is_valid, code_of};
use crate::text::one_line;

/// An upstream message as a 1.0 one: one line, never empty.
pub fn message_of(message: Option<&str>) -> String {
    match message.filter(|m| !m.is_empty()) {
        Some(m) => one_line(m),
        None => "(the upstream gave no message)".to_string(),
    }
}

/// A category for an error that names none (AFDATA, aiocs): its code when
/// that is a category, or one of AFDATA's common codes; else by its
/// retry disposition, `unavailable` or `internal` (spec §9.2, §9.4).
pub fn category_of_code(code: Option<&str>, retryable: bool) -> Cow<'static, str> {
    let code = code.map(|c| c.to_ascii_lowercase());
    let known = code.as_deref().and_then(|c| {
        CATEGORIES.iter().copied().find(|k| *k == c).or(match c {
            "rate_limit" | "quota" | "quota_exceeded" => Some("rate_limited"),
            "validation_error" | "invalid" | "invalid_argument" => Some("validation"),
            "unauthorized" | "unauthenticated" => Some("authn"),
            "forbidden" | "permission_denied" => Some("authz"),
            "internal_error" => Some("internal"),
            _ => None,
        })
    });
    Cow::Borrowed(known.unwrap_or(if retryable { "unavailable" } else { "internal" }))
}

/// An upstream category as a 1.0 one: AOI 0.2's `temporary` is
/// `unavailable`; any other one 1.0 does not have is routed as
/// `internal` (spec §9.4).
pub fn category_of(category: &str) -> Cow<'static, str> {
    match category {
        c if CATEGORIES.contains(&c) => Cow::Owned(c.to_string()),
        "temporary" => Cow::Borrowed("unavailable"),
        _ => Cow::Borrowed("internal"),
    }
}
