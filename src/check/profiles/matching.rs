//! A profile's matches (docs/contract.md §6.3): a table of dotted paths,
//! each a condition on the decoded value found there. A scalar is
//! equality (its JSON type included: `0` is not `"0"`), a list is one of,
//! and a table says `present`, `contains` or `not`. No expressions: a
//! match is decided on decoded values (docs/contract.md §3.2), as every
//! rule is.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Toml;

use crate::json::{Event, Kind, Value};

/// A dotted path: `rate_limit_info.status`, `errors.0`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Path(Vec<String>);

impl TryFrom<String> for Path {
    type Error = String;

    fn try_from(s: String) -> Result<Path, String> {
        let parts: Vec<String> = s.split('.').map(str::to_string).collect();
        if parts.iter().any(String::is_empty) {
            return Err(format!("{s:?} is not a dotted path (an empty part)"));
        }
        Ok(Path(parts))
    }
}

impl Path {
    /// The path of one key.
    pub fn key(key: &str) -> Path {
        Path(vec![key.to_string()])
    }

    /// The value at this path in `ev`, if there is one. A numeric part
    /// indexes an array.
    pub fn find<'a>(&self, ev: &Event<'a>) -> Option<Value<'a>> {
        let (first, rest) = self.0.split_first()?;
        let mut v = ev.get(first)?;
        for part in rest {
            v = match v.kind() {
                Kind::Object => v.field(part)?,
                Kind::Array => v.children().nth(part.parse().ok()?)?.1,
                _ => return None,
            };
        }
        Some(v)
    }

    /// The top-level `type`.
    fn is_type(&self) -> bool {
        matches!(&self.0[..], [only] if only == "type")
    }

    /// Its first part: the top-level member it reads.
    pub fn top(&self) -> &str {
        &self.0[0]
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// A scalar a value is compared with.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    Str(String),
    Bool(bool),
    Int(i64),
    Float(f64),
}

/// What must hold of the value at one path.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    Is(Scalar),
    OneOf(Vec<Scalar>),
    Present(bool),
    Contains(String),
    Not(Box<Cond>),
}

/// Every condition holds (an empty match always does).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(try_from = "BTreeMap<String, Toml>")]
pub struct Match(Vec<(Path, Cond)>);

impl TryFrom<BTreeMap<String, Toml>> for Match {
    type Error = String;

    fn try_from(table: BTreeMap<String, Toml>) -> Result<Match, String> {
        let mut conds = vec![];
        for (key, value) in table {
            flatten(Path::try_from(key)?, value, &mut conds)?;
        }
        // The type is asked first: most events fail there, at an indexed
        // member.
        conds.sort_by_key(|(p, _)| p.0 != ["type"]);
        Ok(Match(conds))
    }
}

const WORDS: [&str; 3] = ["present", "contains", "not"];

/// Keys that read as a condition but are none: a table holding one is a
/// mistake, never a path.
const LOOK_LIKE_WORDS: [&str; 14] = [
    "exists",
    "equals",
    "eq",
    "ne",
    "is",
    "in",
    "one_of",
    "matches",
    "regex",
    "prefix",
    "starts_with",
    "ends_with",
    "absent",
    "missing",
];

/// A table whose keys are all condition words is a condition; any other
/// table goes one part deeper (`{ rate_limit_info = { status = "x" } }`
/// is the path `rate_limit_info.status`).
fn flatten(path: Path, value: Toml, out: &mut Vec<(Path, Cond)>) -> Result<(), String> {
    match value {
        Toml::Object(table) if !table.is_empty() && table.keys().all(|k| WORDS.contains(&&**k)) => {
            for (word, v) in table {
                out.push((path.clone(), word_cond(&path, &word, v)?));
            }
            Ok(())
        }
        Toml::Object(table) => {
            if let Some(word) = table.keys().find(|k| LOOK_LIKE_WORDS.contains(&k.as_str())) {
                return Err(format!(
                    "{path}: {word:?} is no condition (a table says present, contains or not; \
                     a table of other keys is a path one part deeper, as {path}.KEY)"
                ));
            }
            for (key, v) in table {
                let mut deeper = path.clone();
                deeper.0.extend(Path::try_from(key)?.0);
                flatten(deeper, v, out)?;
            }
            Ok(())
        }
        other => {
            let cond = value_cond(&path, other)?;
            out.push((path, cond));
            Ok(())
        }
    }
}

fn word_cond(path: &Path, word: &str, v: Toml) -> Result<Cond, String> {
    match (word, v) {
        ("present", Toml::Bool(b)) => Ok(Cond::Present(b)),
        ("contains", Toml::String(s)) => Ok(Cond::Contains(s)),
        ("not", v) => Ok(Cond::Not(Box::new(value_cond(path, v)?))),
        (word, _) => Err(format!(
            "{path}: {word} takes {}",
            if word == "present" {
                "true or false"
            } else {
                "a string"
            }
        )),
    }
}

fn value_cond(path: &Path, v: Toml) -> Result<Cond, String> {
    match v {
        Toml::Array(items) => Ok(Cond::OneOf(
            items
                .into_iter()
                .map(|i| scalar(path, i))
                .collect::<Result<_, _>>()?,
        )),
        v => Ok(Cond::Is(scalar(path, v)?)),
    }
}

fn scalar(path: &Path, v: Toml) -> Result<Scalar, String> {
    match v {
        Toml::String(s) => Ok(Scalar::Str(s)),
        Toml::Bool(b) => Ok(Scalar::Bool(b)),
        Toml::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(Scalar::Int(i)),
            (None, Some(f)) => Ok(Scalar::Float(f)),
            _ => Err(format!("{path}: a number out of range")),
        },
        _ => Err(format!(
            "{path}: a string, boolean, number or a list of them, or a table of present, contains or not"
        )),
    }
}

impl Match {
    pub fn holds(&self, ev: &Event<'_>) -> bool {
        self.0.iter().all(|(path, cond)| cond.holds(path.find(ev)))
    }

    /// As `holds`, the event's decoded `type` given: a profile asks it once
    /// an event, where each match would decode it again.
    pub fn holds_typed(&self, ev: &Event<'_>, ty: Option<&[u8]>) -> bool {
        self.0.iter().all(|(path, cond)| match cond {
            Cond::Is(Scalar::Str(s)) if path.is_type() => ty == Some(s.as_bytes()),
            Cond::OneOf(list) if path.is_type() => ty.is_some_and(|t| {
                list.iter()
                    .any(|s| matches!(s, Scalar::Str(s) if s.as_bytes() == t))
            }),
            _ => cond.holds(path.find(ev)),
        })
    }

    /// It has no condition: every event matches.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The match of one string: `path` is `value`.
    pub fn equals(path: Path, value: &str) -> Match {
        Match(vec![(path, Cond::Is(Scalar::Str(value.to_string())))])
    }

    /// The paths it reads, for a profile's own checks.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.0.iter().map(|(p, _)| p)
    }
}

/// Any of `matches` holds.
pub fn any(matches: &[Match], ev: &Event<'_>) -> bool {
    matches.iter().any(|m| m.holds(ev))
}

/// As `any`, the event's decoded `type` given (`Match::holds_typed`).
pub fn any_typed(matches: &[Match], ev: &Event<'_>, ty: Option<&[u8]>) -> bool {
    matches.iter().any(|m| m.holds_typed(ev, ty))
}

impl Cond {
    fn holds(&self, v: Option<Value<'_>>) -> bool {
        match self {
            Cond::Present(want) => v.is_some() == *want,
            Cond::Not(inner) => !inner.holds(v),
            Cond::Is(s) => v.is_some_and(|v| s.equals(&v)),
            Cond::OneOf(list) => v.is_some_and(|v| list.iter().any(|s| s.equals(&v))),
            Cond::Contains(part) => v
                .and_then(|v| v.as_str())
                .is_some_and(|s| s.contains(part.as_str())),
        }
    }
}

impl Scalar {
    /// Equal as decoded JSON values: a string to a string, a number to a
    /// number of the same value.
    fn equals(&self, v: &Value<'_>) -> bool {
        match self {
            // The decoded bytes, with no UTF-8 pass: equal to a string's,
            // they are its text.
            Scalar::Str(s) => v.decoded().is_some_and(|t| *t == *s.as_bytes()),
            Scalar::Bool(b) => v.as_bool() == Some(*b),
            Scalar::Int(i) => v.kind() == Kind::Number && number(v) == Some(*i as f64),
            Scalar::Float(f) => v.kind() == Kind::Number && number(v) == Some(*f),
        }
    }
}

/// A number's value (JSON's grammar is Rust's float grammar's subset).
pub fn number(v: &Value<'_>) -> Option<f64> {
    std::str::from_utf8(v.raw()).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, Parser};

    fn holds(toml_match: &str, line: &str) -> bool {
        let m: Match = toml::from_str::<BTreeMap<String, Match>>(&format!("m = {toml_match}"))
            .unwrap()
            .remove("m")
            .unwrap();
        let mut arena = Arena::default();
        let index = Parser::new().parse(line.as_bytes(), &mut arena).unwrap();
        m.holds(&index.event(line.as_bytes(), &arena))
    }

    #[test]
    fn a_scalar_is_equality_with_its_json_type() {
        assert!(holds(r#"{ type = "result" }"#, r#"{"type":"result"}"#));
        assert!(holds(r#"{ type = "result" }"#, r#"{"type":"res\u0075lt"}"#));
        assert!(!holds(r#"{ type = "result" }"#, r#"{"type":"results"}"#));
        assert!(holds("{ n = 429 }", r#"{"n":429}"#));
        assert!(holds("{ n = 429 }", r#"{"n":4.29e2}"#));
        assert!(!holds("{ n = 429 }", r#"{"n":"429"}"#));
        assert!(holds("{ ok = false }", r#"{"ok":false}"#));
        assert!(!holds("{ ok = false }", r#"{"ok":null}"#));
        assert!(!holds("{ ok = false }", r#"{}"#));
    }

    #[test]
    fn lists_tables_and_paths() {
        let m = r#"{ type = "system", subtype = ["init", "status"] }"#;
        assert!(holds(m, r#"{"type":"system","subtype":"status"}"#));
        assert!(!holds(m, r#"{"type":"system","subtype":"api_retry"}"#));
        let deep = r#"{ "rate_limit_info.status" = "rejected" }"#;
        let nested = r#"{ rate_limit_info = { status = "rejected" } }"#;
        let line = r#"{"rate_limit_info":{"status":"rejected"}}"#;
        assert!(holds(deep, line) && holds(nested, line));
        assert!(holds(r#"{ "errors.1" = "b" }"#, r#"{"errors":["a","b"]}"#));
        assert!(holds("{ error = { present = true } }", r#"{"error":null}"#));
        assert!(holds("{ error = { present = false } }", r#"{"x":1}"#));
        assert!(holds(
            r#"{ m = { contains = "limit" } }"#,
            r#"{"m":"usage limit hit"}"#
        ));
        assert!(holds(
            r#"{ r = { not = "tool-calls" } }"#,
            r#"{"r":"stop"}"#
        ));
        assert!(!holds(
            r#"{ r = { not = ["tool-calls", "x"] } }"#,
            r#"{"r":"x"}"#
        ));
        assert!(holds("{}", r#"{"anything":1}"#));
    }

    #[test]
    fn a_bad_match_says_where() {
        let err = toml::from_str::<BTreeMap<String, Match>>("m = { a = { present = 1 } }")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 1") && err.contains("present takes true or false"),
            "{err}"
        );
    }
}
