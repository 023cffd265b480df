//! Reading a profile's TOML (docs/contract.md §6.3). A file with a mistake
//! is refused whole, naming the line and column of the mistake and what
//! is wrong, before any input is read.

use super::model::Profile;

/// A profile that could not be read: one line, naming where.
#[derive(Debug)]
pub struct LoadError(pub String);

/// A profile from its TOML text.
pub fn parse(text: &str) -> Result<Profile, LoadError> {
    let mut profile: Profile = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| {
                let (line, column) = line_column(text, s.start);
                format!("line {line}, column {column}: ")
            })
            .unwrap_or_default();
        LoadError(format!("{at}{}", crate::text::one_line(e.message())))
    })?;
    let problem = if !valid_name(&profile.name) {
        Some((
            "name",
            format!(
                "name {:?} is not a name: lower-case letters, digits and -",
                profile.name
            ),
        ))
    } else if profile.open.is_empty() {
        Some((
            "open",
            "open lists no event: nothing would open a run".to_string(),
        ))
    } else if profile.end.is_empty() {
        Some(("end", "end lists no event: no run could end".to_string()))
    } else {
        None
    };
    if let Some((key, p)) = problem {
        return Err(LoadError(format!("{}{p}", at_key(text, key))));
    }
    profile.text = text.to_string();
    Ok(profile)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Where a top-level `key = ...` is in `text`, as a mistake names it
/// ("line L, column 1: "), or nothing when it is not found there.
pub(super) fn at_key(text: &str, key: &str) -> String {
    let found = text.lines().position(|l| {
        l.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    });
    found.map_or_else(String::new, |i| format!("line {}, column 1: ", i + 1))
}

/// The 1-based line and column (in characters) of byte `at` in `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = crate::text::prefix(text, at);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "mine"
about = "my tool --json"
open = [{ type = "start" }]
[[end]]
when = { type = "done" }
success = { ok = true }
[source]
package = "mine"
version = "1"
file = "README"
"#;

    #[test]
    fn a_minimal_profile_reads() {
        let p = parse(MINIMAL).unwrap();
        assert_eq!(p.name, "mine");
        assert_eq!(p.type_field, "type");
        assert_eq!(p.end.len(), 1);
    }

    #[test]
    fn a_mistake_names_its_line_and_column() {
        let bad = MINIMAL.replace("success = { ok = true }", "sucess = { ok = true }");
        let e = parse(&bad).unwrap_err().0;
        assert!(e.starts_with("line 7, column 1: "), "{e}");
        assert!(e.contains("sucess"), "{e}");
        let bad = MINIMAL.replace("name = \"mine\"", "name = \"Mine!\"");
        assert!(parse(&bad).unwrap_err().0.contains("is not a name"));
        let bad = format!("{MINIMAL}\n[categories]\ncodes = {{ x = \"rate_limit\" }}\n");
        let e = parse(&bad).unwrap_err().0;
        assert!(e.contains("line 14") && e.contains("not a category"), "{e}");
    }
}
