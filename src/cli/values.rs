//! The values of single flags, as clap parses them: durations, sizes,
//! patterns, schema pins and rule ids. A bad value is clap's usage error,
//! said with the flag it came with.

use crate::check::ProfileRef;
use std::time::Duration;

use crate::check::SchemaPin;
use crate::check::rules::Rule;

/// `--timeout`: a duration, and not zero (which would stop CMD at once).
pub(super) fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err("a zero timeout would stop the command before it starts".into());
    }
    Ok(d)
}

/// A human duration: `500ms`, `2s`, `1.5m`, `1h`; a bare number is seconds.
pub(super) fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration: use e.g. 500ms, 2s, 1m"))?;
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => return Err(format!("unknown unit {other:?}: use ms, s, m or h")),
    };
    // A week is longer than any harness waits; past it is a typo.
    let d = Duration::try_from_secs_f64(n * scale).map_err(|_| format!("{s:?} is too long"))?;
    if d > Duration::from_secs(7 * 24 * 3600) {
        return Err(format!("{s:?} is longer than a week"));
    }
    Ok(d)
}

pub(super) fn parse_marker(s: &str) -> Result<String, String> {
    let re = regex::Regex::new(s).map_err(|e| format!("not a regular expression: {e}"))?;
    if re.captures_len() != 2 {
        return Err("the pattern needs exactly one capture group, for N".into());
    }
    Ok(s.to_string())
}

/// `--profile NAME|FILE`: read once, here, so a profile with a mistake
/// is a usage error (64) naming its line and column (docs/contract.md §6.3).
/// Its possible values are the built-ins, for help and completions; a
/// file is taken too.
#[derive(Clone)]
pub(super) struct ProfileArg;

impl clap::builder::TypedValueParser for ProfileArg {
    type Value = ProfileRef;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<ProfileRef, clap::Error> {
        // A function parser says its error as clap says every other.
        // `auto` and every protocol's name: a report's `protocol` names a
        // protocol or a profile, never both.
        let read: fn(&str) -> Result<ProfileRef, String> = |s| {
            let protocol = |n: &str| n == "auto" || crate::check::Protocol::from_name(n).is_some();
            crate::check::profiles::by_name_or_file(s, protocol).map_err(|e| e.0)
        };
        read.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = crate::check::profiles::builtins().iter().map(|p| {
            clap::builder::PossibleValue::new(p.get().name.as_str()).help(p.get().about.as_str())
        });
        Some(Box::new(names))
    }
}

pub(super) fn parse_pin(s: &str) -> Result<SchemaPin, String> {
    let (name, major) = match s.rsplit_once('@') {
        Some((n, m)) => {
            let m = m
                .parse()
                .map_err(|_| format!("major version {m:?} is not a whole number"))?;
            (n, Some(m))
        }
        None => (s, None),
    };
    if name.is_empty() {
        return Err("the schema name is empty".into());
    }
    Ok(SchemaPin {
        name: name.to_string(),
        major,
    })
}

/// `65536`, `64K`, `64MiB`, `1G`: binary multiples.
pub(super) fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits]
        .parse()
        .map_err(|_| format!("{s:?} is not a size in bytes"))?;
    let mult: u64 = match t[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        other => return Err(format!("unknown size suffix {other:?} (use K, M or G)")),
    };
    let bytes = n
        .checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    // The line index keeps positions in 32 bits (src/json/mod.rs).
    if bytes > u64::from(u32::MAX) {
        return Err(format!(
            "{s:?} is too large: a line is at most 4 GiB - 1 bytes"
        ));
    }
    usize::try_from(bytes).map_err(|_| format!("{s:?} is too large"))
}

pub(super) fn parse_rule(s: &str) -> Result<Rule, String> {
    Rule::from_id(s)
        .ok_or_else(|| format!("unknown rule {s:?}; `aoitap verify --help` lists the rule ids"))
}

/// `--allow` and `--deny`'s parser: `parse_rule`, and the catalogue's
/// ids as its possible values, so completions offer them
/// (`--allow seq.<TAB>`); the help leaves the list out (the arg hides it).
#[derive(Clone, Copy, Debug)]
pub(super) struct RuleId;

impl clap::builder::TypedValueParser for RuleId {
    type Value = Rule;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Rule, clap::Error> {
        parse_rule.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let ids = Rule::ALL
            .iter()
            .map(|r| clap::builder::PossibleValue::new(r.id()).help(r.what()));
        Some(Box::new(ids))
    }
}

/// `--schema-version` of a stream command: a version of the schema aoitap
/// serves, by its major (`1`, `1.10.0`); it writes that one (spec §5).
pub(super) fn parse_served_version(s: &str) -> Result<String, String> {
    let served = crate::output::SCHEMA_VERSION;
    if crate::check::major(s).is_some() && crate::check::major(s) == crate::check::major(served) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "schema version {s} is not served; aoitap serves {served}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert!(parse_size("4G").is_err());
        assert_eq!(parse_size("2k"), Ok(2048));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn pins() {
        assert_eq!(
            parse_pin("a.b@2"),
            Ok(SchemaPin {
                name: "a.b".into(),
                major: Some(2)
            })
        );
        assert_eq!(
            parse_pin("a.b"),
            Ok(SchemaPin {
                name: "a.b".into(),
                major: None
            })
        );
        assert!(parse_pin("a@x").is_err());
    }
}
