//! What `--redact` writes for a judged line (DESIGN §10, §13): the one
//! decision `verify --relay --redact`, `run --redact`, `split-by-run
//! --redact` and `strip-envelope --redact` share.

use super::checker::Decision;
use super::meta_args::args_exposures;
use super::secrets::{Exposure, Withholding};
use crate::input::scan::Line;
use crate::json::Event;

/// What `--redact` writes over in a parsed line: the exposures the
/// checker found, and on an `aoi:meta` line its sensitive `args` values.
/// `scratch` holds the list when it is more than the checker's; the
/// common line costs one lookup of its type.
pub fn redactions<'a>(
    ev: &Event<'_>,
    decided: &Decision<'a>,
    scratch: &'a mut Vec<Exposure>,
) -> &'a [Exposure] {
    if ev.ty_bytes().as_deref() != Some(b"aoi:meta") {
        return decided.exposures;
    }
    scratch.clear();
    scratch.extend_from_slice(decided.exposures);
    args_exposures(ev, scratch);
    scratch
}

/// What `--redact` writes for one judged line, its ending left to the
/// writer: the one decision `verify --relay --redact`, `run --redact` and
/// `split-by-run --redact` share (DESIGN §10, §13).
pub enum Relay<'a> {
    /// The line is withheld: this placeholder stands in its place.
    Withholding(Withholding),
    /// The line's bytes, with each exposure written over (none: the bytes
    /// as they came).
    Bytes(&'a [u8], &'a [Exposure]),
}

/// How `line`, just judged (`decided`), is written under `--redact`;
/// `scratch` holds the exposures of a meta line.
pub fn relay<'a>(
    line: &Line<'a>,
    decided: &Decision<'a>,
    scratch: &'a mut Vec<Exposure>,
) -> Relay<'a> {
    if let Some(why) = decided.withheld {
        return Relay::Withholding(why);
    }
    if let Some(ev) = line.event() {
        return Relay::Bytes(ev.line(), redactions(&ev, decided, scratch));
    }
    match *line {
        // Not a parsed object, and no secret-looking key in it.
        Line::Complete { bytes, .. }
        | Line::Unterminated {
            bytes: Some(bytes), ..
        } => Relay::Bytes(bytes, &[]),
        // Never held, so never searched (`secrets::withheld` says so too).
        Line::TooLong { .. } | Line::Unterminated { bytes: None, .. } => {
            Relay::Withholding(Withholding::Unheld)
        }
    }
}
