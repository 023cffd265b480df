//! Codes and categories as AOI 1.0 has them (spec §9.1, §9.2): what an
//! upstream's own become when `upgrade` forwards its errors, and when
//! its summary carries their retry fields in `caused_by`.

use std::borrow::Cow;

use crate::check::rules::CATEGORIES;
use crate::text::one_line;

/// `[A-Z][A-Z0-9_]*` (spec §9.1).
pub fn code_is_valid(code: &str) -> bool {
    let b = code.as_bytes();
    b.first().is_some_and(u8::is_ascii_uppercase)
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

/// An upstream code as a 1.0 one: upper case, every other byte `_`, and
/// `E_` before one that does not start with a letter; `fallback` for
/// none.
pub fn code_of(code: Option<&str>, fallback: &str) -> String {
    let Some(code) = code.filter(|c| !c.is_empty()) else {
        return fallback.to_string();
    };
    if code_is_valid(code) {
        return code.to_string();
    }
    let mut out: String = crate::text::prefix(code, 128)
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' => c.to_ascii_uppercase(),
            _ => '_',
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_uppercase()) {
        out.insert_str(0, "E_");
    }
    out
}

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
