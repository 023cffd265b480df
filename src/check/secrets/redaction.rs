//! What `--redact` writes for a judged line (docs/contract.md §7.1, §3.3): the one
//! decision `verify --relay --redact`, `run --redact`, `split-by-run
//! --redact` and `strip-envelope --redact` share, and the one writer of a
//! line with its exposures replaced.
//!
//! It reads what the checker decided of the line (its exposures, and
//! whether it is withheld) as plain values, not the checker's `Decision`,
//! so `secrets/` stays below `checker.rs`, which calls it.

use std::io::{self, Write};

use super::exposure::{Exposure, MARK};
use super::meta_args::args_exposures;
use super::unparsed::Withholding;
use crate::input::scan::Line;
use crate::json::Event;

/// What `--redact` writes over in a parsed line: the exposures the
/// checker found (`found`), and on an `aoi:meta` line its sensitive
/// `args` values. `scratch` holds the list when it is more than the
/// checker's; the common line costs one lookup of its type.
pub fn redactions<'a>(
    ev: &Event<'_>,
    found: &'a [Exposure],
    scratch: &'a mut Vec<Exposure>,
) -> &'a [Exposure] {
    if ev.ty_bytes().as_deref() != Some(b"aoi:meta") {
        return found;
    }
    scratch.clear();
    scratch.extend_from_slice(found);
    args_exposures(ev, scratch);
    scratch
}

/// What `--redact` writes for one judged line, its ending left to the
/// writer: the one decision `verify --relay --redact`, `run --redact` and
/// `split-by-run --redact` share (docs/contract.md §7.1, §3.3).
pub enum Relay<'a> {
    /// The line is withheld: this placeholder stands in its place.
    Withholding(Withholding),
    /// The line's bytes, with each exposure written over (none: the bytes
    /// as they came).
    Bytes(&'a [u8], &'a [Exposure]),
}

/// How `line`, just judged (the checker's `withheld` and `found`
/// exposures), is written under `--redact`; `scratch` holds the exposures
/// of a meta line.
pub fn relay<'a>(
    line: &Line<'a>,
    withheld: Option<Withholding>,
    found: &'a [Exposure],
    scratch: &'a mut Vec<Exposure>,
) -> Relay<'a> {
    if let Some(why) = withheld {
        return Relay::Withholding(why);
    }
    if let Some(ev) = line.event() {
        return Relay::Bytes(ev.line(), redactions(&ev, found, scratch));
    }
    match *line {
        // Not a parsed object, and no secret-looking key in it; a
        // document on this line alone (an array of events, or a last line
        // without its optional newline) has its exposures placed in it.
        Line::Complete { bytes, .. }
        | Line::Unterminated {
            bytes: Some(bytes), ..
        } => Relay::Bytes(bytes, found),
        // Never held, so never searched (`unparsed::withheld` says so too).
        Line::TooLong { .. } | Line::Unterminated { bytes: None, .. } => {
            Relay::Withholding(Withholding::Unheld)
        }
    }
}

/// `line[range]` with `cut` left out and every exposure replaced: every
/// other byte as it came, written to `out` piece by piece (no copy of the
/// line is made, so a long line costs no third buffer).
pub fn redact(
    line: &[u8],
    range: (usize, usize),
    cut: Option<(usize, usize)>,
    exposures: &[Exposure],
    out: &mut impl Write,
) -> io::Result<()> {
    let mut spans: Vec<(usize, usize, Option<&[u8]>)> = exposures
        .iter()
        .flat_map(|e| {
            let with: &[u8] = if e.whole { b"\"***\"" } else { MARK };
            e.spans.iter().map(move |&(a, b)| (a, b, Some(with)))
        })
        .chain(cut.map(|(a, b)| (a, b, None)))
        .filter(|&(a, b, _)| a >= range.0 && b <= range.1)
        .collect();
    spans.sort_unstable_by_key(|&(a, b, _)| (a, b));
    let mut at = range.0;
    for (a, b, with) in spans {
        // A span inside one already written over (a secret inside the
        // cut envelope) is gone with it.
        if a < at {
            continue;
        }
        out.write_all(&line[at..a])?;
        out.write_all(with.unwrap_or_default())?;
        at = b;
    }
    out.write_all(&line[at..range.1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_changes_only_the_spans() {
        let line = br#"{"a_secret":{"x":1},"b":2,"u_url":"https://u:pw@h/?k_secret=v"}"#;
        let exposures = vec![
            Exposure {
                path: "a_secret".into(),
                url: false,
                spans: vec![(12, 19)],
                whole: true,
            },
            Exposure {
                path: "u_url".into(),
                url: true,
                spans: vec![(45, 47), (60, 61)],
                whole: false,
            },
        ];
        let mut out = vec![];
        redact(line, (0, line.len()), None, &exposures, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a_secret":"***","b":2,"u_url":"https://u:***@h/?k_secret=***"}"#
        );
    }
}
