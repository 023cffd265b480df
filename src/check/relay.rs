//! What `--redact` writes for a judged line (DESIGN §10, §13): the one
//! decision `verify --relay --redact`, `run --redact`, `split-by-run
//! --redact` and `strip-envelope --redact` share.

use super::checker::Checker;
use super::meta_args::args_exposures;
use super::protocols::Seen;
use super::secrets::{self, Exposure, Withheld};
use crate::input::scan::Line;
use crate::json::Event;

/// What `--redact` writes over in a parsed line: the exposures the
/// checker found, and on an `aoi:meta` line its sensitive `args` values.
/// A late line (a run already judged) was not searched by the checker,
/// so it is searched here. `scratch` holds the list when it is more than
/// the checker's; the common line costs one lookup of its type.
pub fn redactions<'a>(
    check: &'a Checker<'_>,
    ev: &Event<'_>,
    seen: &Seen,
    scratch: &'a mut Vec<Exposure>,
) -> &'a [Exposure] {
    let meta = ev.ty_bytes().as_deref() == Some(b"aoi:meta");
    if !meta && !seen.late {
        return check.exposures();
    }
    if seen.late {
        secrets::scan(ev, check.secret_names(), scratch);
    } else {
        scratch.clear();
        scratch.extend_from_slice(check.exposures());
    }
    if meta {
        args_exposures(ev, scratch);
    }
    scratch
}

/// What `--redact` writes for one judged line, its ending left to the
/// writer: the one decision `verify --relay --redact`, `run --redact` and
/// `split-by-run --redact` share (DESIGN §10, §13).
pub enum Relay<'a> {
    /// The line is withheld: this placeholder stands in its place.
    Withheld(Withheld),
    /// The line's bytes, with each exposure written over (none: the bytes
    /// as they came).
    Bytes(&'a [u8], &'a [Exposure]),
}

/// How `line`, just judged by `check` (`seen`), is written under
/// `--redact`; `scratch` holds the exposures of a meta or late line.
pub fn relay<'a>(
    check: &'a Checker<'_>,
    line: &Line<'a>,
    seen: &Seen,
    scratch: &'a mut Vec<Exposure>,
) -> Relay<'a> {
    if let Some(why) = check.withheld() {
        return Relay::Withheld(why);
    }
    if let Some(ev) = line.event() {
        return Relay::Bytes(ev.line(), redactions(check, &ev, seen, scratch));
    }
    match *line {
        // Not a parsed object, and no secret-looking key in it.
        Line::Complete { bytes, .. }
        | Line::Unterminated {
            bytes: Some(bytes), ..
        } => Relay::Bytes(bytes, &[]),
        // Never held, so never searched (`secrets::withheld` says so too).
        Line::TooLong { .. } | Line::Unterminated { bytes: None, .. } => {
            Relay::Withheld(Withheld::Unheld)
        }
    }
}
