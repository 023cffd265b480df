//! How a producer profile reads an event (docs/contract.md §6.3): an end
//! or an error as the spec's error (§9), its category from the
//! producer's own, its HTTP status (§9.5), its code or, where the profile
//! marks them fragile, its message. The run's rules are `profile.rs`'s.

use crate::check::rules::code_of;
use crate::check::run_state::Cause;
use crate::json::{Event, Kind, Value};
use crate::text::quote;

use crate::check::profiles::matching::{Path, number};
use crate::check::profiles::model::{self, Fields};
use crate::check::profiles::{Level, Profile};

/// What one event says, as its profile reads it (summarize, upgrade).
pub enum Reading {
    /// It ends a turn: a success, or a failure (cancelled or not) with
    /// what the producer said of it.
    End {
        ok: bool,
        cancelled: bool,
        error: Option<Problem>,
    },
    /// An error that does not end the run.
    Error { level: Level, error: Problem },
    /// Any other event.
    Other,
}

/// An error as the producer said it, read as the spec's (§9).
#[derive(Clone, Debug, Default)]
pub struct Problem {
    pub category: String,
    pub code: Option<String>,
    pub message: Option<String>,
    /// The HTTP status it carried, if any (spec §9.5).
    pub status: Option<u16>,
    pub retryable: bool,
    pub retry_after_ms: Option<u64>,
}

/// An error as the producer said it.
#[derive(Clone, Default)]
pub(super) struct Said {
    pub(super) cause: Cause,
    pub(super) message: Option<String>,
    /// What kind of event said it ("api_retry", "error").
    pub(super) what: String,
}

impl Profile {
    /// What `ev` says, read alone (no run around it).
    pub fn read(&self, ev: &Event<'_>) -> Reading {
        if let Some(end) = self.end.iter().find(|e| e.when.holds(ev)) {
            let ok = end.success.as_ref().is_some_and(|m| m.holds(ev));
            let cancelled = !ok && end.cancelled.as_ref().is_some_and(|m| m.holds(ev));
            let error = (!ok).then(|| {
                self.said(ev, &end.fields(), None)
                    .problem(ev, &end.fields())
            });
            return Reading::End {
                ok,
                cancelled,
                error,
            };
        }
        match self.error.iter().find(|e| e.when.holds(ev)) {
            Some(e) => Reading::Error {
                level: e.level,
                error: self.said(ev, &e.fields(), None).problem(ev, &e.fields()),
            },
            None => Reading::Other,
        }
    }

    /// An error's parts, where `fields` says they are; what the event does
    /// not say is taken from `before` (the last provisional error).
    pub(super) fn said(&self, ev: &Event<'_>, fields: &Fields<'_>, before: Option<&Said>) -> Said {
        let first = |paths: &[Path]| paths.iter().find_map(|p| p.find(ev)).and_then(|v| text(&v));
        let code = first(fields.code);
        let message = first(fields.message);
        let status = status(ev, fields);
        let own_category = first(fields.category)
            .and_then(|c| model::Category::try_from(c).ok())
            .map(|c| c.0);
        let retry_after_ms = fields
            .retry_after_ms
            .iter()
            .find_map(|p| p.find(ev))
            .and_then(|v| v.uint());
        let category = own_category
            .or_else(|| status.map(category_of_status))
            .or_else(|| {
                code.as_deref()
                    .and_then(|c| self.categories.codes.get(c))
                    .map(|c| c.0)
            })
            .or_else(|| {
                let m = message.as_deref()?.to_lowercase();
                self.categories
                    .fragile_messages
                    .iter()
                    .find(|r| m.contains(&r.contains.to_lowercase()))
                    .map(|r| r.category.0)
            });
        let what = ev
            .get(&self.type_field)
            .and_then(|v| v.as_str())
            .map(|s| s.into_owned())
            .unwrap_or_default();
        // An end that says nothing of its own is read with the error
        // before it (Gemini's result after its error event).
        if category.is_none()
            && code.is_none()
            && let Some(b) = before
        {
            let mut said = b.clone();
            said.message = message.or(said.message);
            return said;
        }
        let category = category.unwrap_or("internal");
        let retryable = model::Category(category).retryable();
        Said {
            cause: Cause {
                origin: None,
                category: Some(category.to_string()),
                code: code.map(|c| code_of(Some(&c), "UPSTREAM_ERROR")),
                retryable,
                retry_after_ms: retry_after_ms.filter(|_| retryable).or(before
                    .and_then(|b| b.cause.retry_after_ms)
                    .filter(|_| retryable)),
            },
            message,
            what,
        }
    }
}

impl Said {
    fn problem(self, ev: &Event<'_>, fields: &Fields<'_>) -> Problem {
        Problem {
            category: self.cause.category.unwrap_or_else(|| "internal".into()),
            code: self.cause.code,
            message: self.message,
            status: status(ev, fields),
            retryable: self.cause.retryable,
            retry_after_ms: self.cause.retry_after_ms,
        }
    }

    pub(super) fn describe(&self) -> String {
        let mut s = if self.what.is_empty() {
            "an error".to_string()
        } else {
            quote(&self.what)
        };
        if let Some(m) = &self.message {
            s.push_str(&format!(": {}", quote(crate::text::prefix(m, 200))));
        }
        s
    }
}

/// The HTTP status an error carries, where `fields` says it is.
fn status(ev: &Event<'_>, fields: &Fields<'_>) -> Option<u16> {
    fields
        .status
        .iter()
        .find_map(|p| p.find(ev))
        .and_then(|v| number(&v))
        .filter(|n| n.fract() == 0.0 && (100.0..=599.0).contains(n))
        .map(|n| n as u16)
}

/// A value as text: a string decoded, a number as written.
fn text(v: &Value<'_>) -> Option<String> {
    match v.kind() {
        Kind::String => v.as_str().map(|s| s.into_owned()).filter(|s| !s.is_empty()),
        Kind::Number | Kind::Bool => Some(String::from_utf8_lossy(v.raw()).into_owned()),
        _ => None,
    }
}

/// An HTTP status's category (spec §9.5), unlisted ones by their class.
fn category_of_status(status: u16) -> &'static str {
    match status {
        400 | 422 => "validation",
        401 => "authn",
        403 => "authz",
        404 | 410 => "not_found",
        405 | 501 => "unsupported",
        408 | 504 => "timeout",
        409 => "conflict",
        412 | 428 => "precondition_failed",
        429 => "rate_limited",
        502 | 503 => "unavailable",
        500 => "internal",
        499 => "cancelled",
        // Unlisted ones by their class (spec §9.5).
        _ => match status / 100 {
            4 => "validation",
            5 => "unavailable",
            _ => "internal",
        },
    }
}
