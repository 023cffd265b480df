//! The checks every protocol's events share, made by the checker before a
//! run's protocol is asked (docs/contract.md §7.1, §3.5, §6.2): exposed
//! secrets, `verify --schema`, and AFDATA's unit suffixes where they apply.

use std::io;

use crate::check::finding::{Draft, Reporter};
use crate::check::protocols::afdata_suffixes;
use crate::check::rules::Rule;
use crate::check::run_state::RunState;
use crate::check::schema;
use crate::check::secrets::{self, Exposure};
use crate::input::scan::Validation;
use crate::json::{Event, Kind};

/// `secret.exposed` and `secret.url-exposed`, in every protocol
/// (docs/contract.md §7.1): one finding per exposed value, naming its key path,
/// never its value. `found` keeps them, for `--redact`.
#[inline(always)]
pub(super) fn secrets_found(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    found: &mut Vec<Exposure>,
) -> io::Result<()> {
    if !ev.has_marked_keys() && out.cfg.secret_names.is_empty() {
        return Ok(());
    }
    secrets::scan(ev, &out.cfg.secret_names, found);
    for e in found.iter() {
        let (rule, msg) = if e.url {
            (
                Rule::SecretUrlExposed,
                format!(
                    "{} holds a URL with a secret in it (password or secret-named parameter): redact it to ***",
                    crate::text::quote(&e.path)
                ),
            )
        } else {
            (
                Rule::SecretExposed,
                format!(
                    "{} is marked secret but its value is not \"***\"",
                    crate::text::quote(&e.path)
                ),
            )
        };
        out.report(run, rule, None, msg)?;
    }
    Ok(())
}

/// AFDATA's naming (docs/contract.md §6.2): one `afdata.suffix-type` per field whose
/// value its suffix does not allow. The value is quoted only when it is
/// short, and names nothing secret-looking. Out of line: AOI runs never
/// call it, and inlined it kept `event` out of `judge` (2% more
/// instructions per AOI line).
#[inline(never)]
pub(super) fn suffixes_typed(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
) -> io::Result<()> {
    let names = &out.cfg.secret_names;
    let (found, more) = afdata_suffixes::mistyped(&ev.as_value(), |k| {
        secrets::is_secret_name(k.as_bytes(), names)
    });
    for m in found {
        let is = match m.value.kind() {
            Kind::String => match m.value.as_str() {
                Some(s) if s.len() <= 64 && secrets::quotable::quotable(&s).is_some() => {
                    format!("the string {}", crate::text::quote(&s))
                }
                _ => "a string".to_string(),
            },
            Kind::Number if m.value.raw().len() <= 32 => {
                format!("{}", String::from_utf8_lossy(m.value.raw()))
            }
            Kind::Number => "a number".to_string(),
            Kind::Bool => format!("{}", String::from_utf8_lossy(m.value.raw())),
            Kind::Object => "an object".to_string(),
            Kind::Array => "an array".to_string(),
            Kind::Null => "null".to_string(),
        };
        let msg = format!(
            "{} is {is}: the suffix {} wants {}",
            crate::text::quote(&m.path),
            m.suffix,
            m.want.name()
        );
        out.report(run, Rule::AfdataSuffixType, None, msg)?;
    }
    if more > 0 {
        let msg = format!(
            "{} more fields of this event are mistyped than the {} named",
            more,
            afdata_suffixes::NAMED
        );
        out.report(run, Rule::AfdataSuffixType, None, msg)?;
    }
    Ok(())
}

/// `verify --schema`: the event against the producer's schema (docs/contract.md
/// §3.5), framework and domain events alike. The batch was validated where
/// it was parsed (see `Batch::parse`); a line that was not is validated
/// here.
#[inline(always)]
pub(super) fn schema_checked(
    run: &mut RunState,
    out: &mut Reporter<'_>,
    ev: &Event<'_>,
    checked: Validation<'_>,
) -> io::Result<()> {
    let Some(schema) = out.cfg.schema.as_deref() else {
        return Ok(());
    };
    let here;
    let outcome = match checked {
        Validation::Valid => return Ok(()),
        Validation::Found(o) => o,
        Validation::Unchecked => {
            here = schema.check(ev);
            &here
        }
    };
    match outcome {
        schema::Validity::Valid => Ok(()),
        schema::Validity::Invalid(bad) => {
            let mut f = Draft::new(Rule::EventSchemaInvalid, bad.message.clone());
            f.place = Some(Box::new(bad.place.clone()));
            out.emit(run, f)
        }
        schema::Validity::Unchecked(why) => {
            out.report(run, Rule::EventSchemaUnchecked, None, why.clone())
        }
    }
}
