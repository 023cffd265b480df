//! What each upstream event becomes in the upgraded stream
//! (docs/contract.md §1.6, spec §13.1). A domain event keeps every member
//! but its protocol's envelope byte for byte, and takes aoitap's envelope
//! after its `type`; an upstream error or warning is forwarded as a 1.0
//! one tagged with `origin`; an upstream meta or summary is never
//! forwarded (its identity and outcome are the summary's).
//!
//! Per protocol:
//! - AOI 1.x and 0.2: a domain event re-enveloped (1.x's `aoi` member
//!   goes); `aoi:error`/`aoi:warning` forwarded as they are when they are
//!   1.0's, else rewritten as 1.0's with the upstream event whole under
//!   `properties.upstream`; `aoi:check`, `aoi:plan` and `aoi:progress`
//!   re-enveloped; `aoi:heartbeat` (the upstream's liveness, not ours) and
//!   `aoi:*` types aoitap does not know (the verdict names them) dropped.
//! - AFDATA: `kind` becomes `type` in its place, so `result`, `progress`
//!   and `log` are domain events of those types, payload and `trace` as
//!   they came; a `log` whose `level` is warn or warning is an
//!   `aoi:warning`; an `error` an `aoi:error`, its hint in milliseconds.
//! - ndjson and plain JSON lines: the event as it came; one without a
//!   string `type` takes the discriminator's value (ndjson) or `record`.
//! - aiocs: the envelope as a `result` (its `ok` goes), or its error as
//!   an `aoi:error`; a pretty-printed document is one line.
//! - OKF: the document, whole, as the `document` member of a `document`.
//!
//! An event that cannot be forwarded as it is, under aoitap's envelope,
//! and still conform is kept whole instead: `{"type":"record",...,
//! "record":<the line>}`. That is one whose type is not a string, is
//! `aoi:`-prefixed or is one of aoitap's own report types (whose shapes
//! aoitap's schema fixes); one with its `type` twice, or an `aoi` member
//! besides its protocol's envelope (it would stand beside aoitap's); and
//! an `aoi:check` that is not one of the spec's shape.

use std::borrow::Cow;

use serde::Serialize;

use super::codes::{category_of, category_of_code, code_of, message_of};
use super::own::OwnRun;
use super::shapes::{COPIED, check_conforms, conforms, copied, names_unique, plain};
use super::splice::{Spliced, reenvelope, rewritten, wrapped};
use crate::check::Reading;
use crate::check::payload_retry_after_ms;
use crate::check::profiles::Profile;
use crate::check::{Identity, Mapping, Protocol};
use crate::json::{Event, Kind, Value};
use crate::output::discover::REPORT_TYPES;

/// What a line was written as, for the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Became {
    Domain,
    Error,
    Warning,
    Framework,
    Dropped,
}

/// How one upstream event is read: its protocol, the discriminator of
/// ndjson, and the tool an error is said to come from when it names
/// none.
pub struct Upstream<'a> {
    pub protocol: Protocol,
    /// The event is a document read over several lines.
    pub document: bool,
    pub type_field: &'a str,
    pub origin: &'a str,
}

/// Write `ev` into `line` (a line begun empty) as what it becomes;
/// nothing for what is dropped.
pub fn forward<'a>(
    ev: &Event<'a>,
    up: &Upstream<'_>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) -> Became {
    let became = match up.protocol.mapping() {
        Mapping::Framework { envelope: false }
            if ev.get("aoi").is_some() && !ev.ty().is_some_and(|t| t.starts_with("aoi:")) =>
        {
            // AOI 0.2 has no envelope: a domain event's `aoi` member is its
            // own, kept whole.
            wrapped(ev, "record", own, line);
            Became::Domain
        }
        Mapping::Framework { envelope } => aoi(ev, envelope, up, own, line),
        Mapping::Kinds => afdata(ev, up, own, line),
        Mapping::Typed {
            discriminator,
            untyped_as_record,
        } => {
            let ty = match up.type_field {
                _ if !discriminator => None,
                "type" => None,
                field => ev.get(field),
            };
            typed(ev, ty, untyped_as_record, own, line)
        }
        Mapping::Envelope => aiocs(ev, up, own, line),
        Mapping::Document => {
            wrapped(ev, "document", own, line);
            Became::Domain
        }
        Mapping::Profile(p) => profile(p.get(), ev, up, own, line),
    };
    // A pretty-printed document is written as one line.
    if became != Became::Dropped && up.document {
        crate::text::breaks_as_spaces(line.whole());
    }
    became
}

/// AOI 1.x and 0.2. `envelope`: a top-level `aoi` member is the
/// protocol's envelope (1.x), cut for aoitap's; in 0.2 it is the
/// producer's own data, and an event that has one is kept whole.
fn aoi<'a>(
    ev: &Event<'a>,
    envelope: bool,
    up: &Upstream<'_>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) -> Became {
    // Matched on its decoded bytes: every name below is ASCII, so no
    // UTF-8 pass is needed to tell them.
    let Some(ty) = ev.ty_bytes() else {
        return Became::Dropped;
    };
    let cut = if envelope { ev.aoi_cut() } else { None };
    match &*ty {
        b"aoi:error" => framework_event(ev, "aoi:error", cut, up, own, line),
        b"aoi:warning" => framework_event(ev, "aoi:warning", cut, up, own, line),
        // Its identity is the summary's `upstream`; its tool, the origin
        // of what it forwards.
        b"aoi:meta" => {
            let identity = crate::check::identity(ev);
            own.tool = identity.tool.clone();
            own.upstream = Some(identity);
            Became::Dropped
        }
        // Its outcome is the summary's to say; its `partial`, kept.
        b"aoi:summary" => {
            own.upstream_partial = ev.get("partial").and_then(|v| v.as_bool());
            Became::Dropped
        }
        b"aoi:check" if !check_conforms(ev) => {
            wrapped(ev, "record", own, line);
            Became::Domain
        }
        b"aoi:check" | b"aoi:plan" | b"aoi:progress" if plain(ev, envelope) && names_unique(ev) => {
            reenvelope(ev, cut, None, None, own, line);
            Became::Framework
        }
        t if t.starts_with(b"aoi:")
            && !matches!(t, b"aoi:check" | b"aoi:plan" | b"aoi:progress") =>
        {
            Became::Dropped
        }
        t if plain(ev, envelope) && !REPORT_TYPES.iter().any(|r| r.as_bytes() == t) => {
            reenvelope(ev, cut, None, None, own, line);
            Became::Domain
        }
        _ => {
            wrapped(ev, "record", own, line);
            Became::Domain
        }
    }
}

/// ndjson and plain JSON lines: a string `type` that is not `aoi:` is the
/// event's own; without one, the discriminator's value (`ty`) or `record`
/// is added.
fn typed<'a>(
    ev: &Event<'a>,
    ty: Option<Value<'_>>,
    record: bool,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) -> Became {
    if !plain(ev, false) {
        wrapped(ev, "record", own, line);
        return Became::Domain;
    }
    match ev.get("type") {
        Some(t) if domain_type(t) => reenvelope(ev, None, None, None, own, line),
        Some(_) => wrapped(ev, "record", own, line),
        None => match ty {
            Some(t) if domain_type(t) => reenvelope(ev, None, Some(t.raw()), None, own, line),
            _ if record => reenvelope(ev, None, Some(br#""record""#), None, own, line),
            _ => wrapped(ev, "record", own, line),
        },
    }
    Became::Domain
}

/// A string that is not a framework type (spec §8.2: `aoi:` is closed)
/// nor one of aoitap's own report types.
fn domain_type(v: Value<'_>) -> bool {
    v.as_str()
        .is_some_and(|s| !s.starts_with("aoi:") && !REPORT_TYPES.contains(&&*s))
}

/// A producer profile's event (docs/contract.md §6.3): a domain event typed
/// by the profile's field; its errors and warnings, and a failed end, as
/// 1.0's (an end's error is the run's, scope process), the upstream event
/// whole under `properties.upstream`.
fn profile<'a>(
    p: &Profile,
    ev: &Event<'a>,
    up: &Upstream<'_>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) -> Became {
    // The producer is the profile's: the origin of its errors and the
    // summary's `upstream` (with its version where the stream names one).
    if own.tool.is_none() {
        own.tool = Some(p.tool().to_string());
    }
    let upstream = own.upstream.get_or_insert_with(|| Identity {
        tool: Some(p.tool().to_string()),
        ..Identity::default()
    });
    if upstream.tool_version.is_none() {
        let version = p
            .tool_version
            .iter()
            .find_map(|path| path.find(ev)?.as_str());
        upstream.tool_version = version.map(Cow::into_owned);
    }
    let (ty, error) = match p.read(ev) {
        Reading::Error { error, .. } => ("aoi:warning", error),
        Reading::End {
            ok: false,
            error: Some(error),
            ..
        } => ("aoi:error", error),
        Reading::End { .. } | Reading::Other => {
            let ty = match p.type_field.as_str() {
                "type" => None,
                field => ev.get(field),
            };
            return typed(ev, ty, false, own, line);
        }
    };
    let origin = own.origin(up.origin);
    let is_error = ty == "aoi:error";
    let fields = Rewritten {
        origin: &origin,
        category: Some(category_of(&error.category)),
        code: code_of(error.code.as_deref(), "UPSTREAM_ERROR"),
        message: message_of(error.message.as_deref()),
        retryable: is_error.then_some(error.retryable),
        retry_after_ms: error.retry_after_ms.filter(|_| is_error && error.retryable),
        scope: is_error.then_some("process"),
        wrapped: error.status.map(|status| Wrapped {
            protocol: "http",
            status,
        }),
    };
    rewritten(ev, ty, &fields, None, None, own, line);
    if is_error {
        Became::Error
    } else {
        Became::Warning
    }
}

fn afdata<'a>(
    ev: &Event<'a>,
    up: &Upstream<'_>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) -> Became {
    let kind = ev.get("kind").filter(|k| domain_type(*k));
    let (Some(kind), Some(cut)) = (kind, ev.member_cut("kind")) else {
        wrapped(ev, "record", own, line);
        return Became::Domain;
    };
    let name = kind.as_str().unwrap_or_default();
    let payload = ev.get(&name);
    let warns = || {
        let level = payload
            .and_then(|p| p.field("level"))
            .and_then(|v| v.as_str());
        level.is_some_and(|l| l.eq_ignore_ascii_case("warn") || l.eq_ignore_ascii_case("warning"))
    };
    let origin = own.origin(up.origin);
    match &*name {
        "error" => {
            let p = payload.filter(|p| p.kind() == Kind::Object);
            let error = payload_error(p, &origin, true);
            let hint = p
                .and_then(|p| p.field("hint"))
                .filter(|h| h.kind() == Kind::String);
            rewritten(
                ev,
                "aoi:error",
                &error,
                hint.map(|h| ("hint", h)),
                Some(cut),
                own,
                line,
            );
            Became::Error
        }
        "log" if warns() => {
            let text = |k: &str| payload.and_then(|p| p.field(k)).and_then(|v| v.as_str());
            let warning = Rewritten {
                origin: &origin,
                category: None,
                code: "LOG_WARNING".into(),
                message: message_of(text("message").as_deref()),
                retryable: None,
                retry_after_ms: None,
                scope: None,
                wrapped: None,
            };
            rewritten(ev, "aoi:warning", &warning, None, Some(cut), own, line);
            Became::Warning
        }
        _ if ev.get("type").is_some() || !plain(ev, false) => {
            wrapped(ev, "record", own, line);
            Became::Domain
        }
        _ => {
            reenvelope(ev, Some(cut), Some(kind.raw()), None, own, line);
            Became::Domain
        }
    }
}

fn aiocs<'a>(
    ev: &Event<'a>,
    up: &Upstream<'_>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) -> Became {
    let cut = ev.member_cut("ok");
    if ev.get("ok").and_then(|v| v.as_bool()) != Some(false) {
        match cut {
            Some(cut) if ev.get("type").is_none() && plain(ev, false) => {
                reenvelope(ev, Some(cut), Some(br#""result""#), None, own, line);
            }
            _ => wrapped(ev, "record", own, line),
        }
        return Became::Domain;
    }
    let origin = own.origin(up.origin);
    let p = ev.get("error").filter(|p| p.kind() == Kind::Object);
    let error = payload_error(p, &origin, false);
    rewritten(ev, "aoi:error", &error, None, None, own, line);
    Became::Error
}

/// An error payload of `code` and `message` with no category (AFDATA's,
/// aiocs'), as a 1.0 error's fields; `hinted`: its retry hint is read
/// (AFDATA's `retry_after_ms` or `retry_after_s`).
fn payload_error<'a>(p: Option<Value<'_>>, origin: &'a str, hinted: bool) -> Rewritten<'a> {
    let text = |k: &str| p.and_then(|p| p.field(k)).and_then(|v| v.as_str());
    let retryable = p
        .and_then(|p| p.field("retryable"))
        .and_then(|v| v.as_bool())
        == Some(true);
    let code = text("code");
    Rewritten {
        origin,
        category: Some(category_of_code(code.as_deref(), retryable)),
        code: code_of(code.as_deref(), "UPSTREAM_ERROR"),
        message: message_of(text("message").as_deref()),
        retryable: Some(retryable),
        retry_after_ms: p
            .filter(|_| hinted && retryable)
            .and_then(payload_retry_after_ms),
        scope: Some("process"),
        wrapped: None,
    }
}

/// An upstream `aoi:error` or `aoi:warning`: as it came when it is 1.0's
/// (its envelope aoitap's, `origin` added when it has none), else
/// rewritten as 1.0's.
fn framework_event<'a>(
    ev: &Event<'a>,
    ty: &str,
    cut: Option<(usize, usize)>,
    up: &Upstream<'_>,
    own: &mut OwnRun,
    line: &mut Spliced<'a>,
) -> Became {
    let error = ty == "aoi:error";
    let became = if error {
        Became::Error
    } else {
        Became::Warning
    };
    // An `aoi` member that is no envelope (0.2's) is the producer's: the
    // event is rewritten, kept whole under `properties.upstream`.
    let own_aoi = cut.is_none() && ev.get("aoi").is_some();
    if conforms(ev, error) && !own_aoi {
        let origin = match ev.get("origin") {
            Some(_) => None,
            None => Some(own.origin(up.origin)),
        };
        reenvelope(ev, cut, None, origin.as_deref(), own, line);
        return became;
    }
    let text = |k: &str| ev.get(k).and_then(|v| v.as_str());
    let retryable = ev.get("retryable").and_then(|v| v.as_bool()) == Some(true);
    let category = text("category").map(|c| category_of(&c));
    let origin = text("origin")
        .map(Cow::into_owned)
        .unwrap_or_else(|| own.origin(up.origin));
    let rewritten_event = Rewritten {
        origin: &origin,
        category: category.or_else(|| error.then(|| "internal".into())),
        code: code_of(
            text("code").as_deref(),
            if error {
                "UPSTREAM_ERROR"
            } else {
                "UPSTREAM_WARNING"
            },
        ),
        message: message_of(text("message").as_deref()),
        retryable: error.then_some(retryable),
        retry_after_ms: ev
            .get("retry_after_ms")
            .and_then(|v| v.uint())
            .filter(|_| error && retryable),
        scope: text("scope")
            .filter(|s| error && matches!(&**s, "process" | "item"))
            .map(|s| if s == "item" { "item" } else { "process" }),
        wrapped: None,
    };
    let members = COPIED
        .iter()
        .filter_map(|(k, kind)| Some((*k, ev.get(k).filter(|v| copied(k, *kind, *v))?)));
    rewritten(ev, ty, &rewritten_event, members, cut, own, line);
    became
}

/// A wrapped protocol's raw status (spec §9.1).
#[derive(Serialize)]
struct Wrapped {
    protocol: &'static str,
    status: u16,
}

/// The spec fields of a rewritten error or warning, in the order a 1.0
/// event writes them.
#[derive(Serialize)]
struct Rewritten<'a> {
    origin: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<Cow<'a, str>>,
    code: String,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    retryable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'static str>,
    /// The HTTP status a producer's error carried (spec §9.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    wrapped: Option<Wrapped>,
}
