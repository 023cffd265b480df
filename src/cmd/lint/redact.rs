//! Secret-looking values out of what lint quotes of a tool (its stderr,
//! a line of its stdout): a report goes to CI logs, a secret must not.

use crate::check::is_sensitive_name;

/// `text` with what follows each secret-looking name redacted: the value
/// of `name=value`, `name:value`, `"name":"value"`, the word after
/// `--name` or `name:`, the credential after `Bearer` or `Basic`, and a
/// URL's userinfo (a tool's error may quote what it was given). Words are
/// split at any white space and joined by one space.
pub fn words(text: &str) -> String {
    let mut out: Vec<String> = vec![];
    let mut hide = false;
    for word in text.split_whitespace() {
        if hide {
            out.push("***".to_string());
            // An auth scheme comes before the credential itself.
            hide = is_scheme(word);
            continue;
        }
        let (said, next) = redact_word(word);
        out.push(said);
        hide = next;
    }
    out.join(" ")
}

fn is_scheme(word: &str) -> bool {
    ["bearer", "basic", "token"].contains(&word.trim_matches('"').to_ascii_lowercase().as_str())
}

/// One word redacted, and whether the next word is a value to hide.
fn redact_word(word: &str) -> (String, bool) {
    let mut w = word.to_string();
    if let Some(p) = w.find("://")
        && let Some(at) = w[p + 3..].find('@')
    {
        w.replace_range(p + 3..p + 3 + at, "***");
    }
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    for (i, ch) in w.char_indices() {
        if ch != '=' && ch != ':' {
            continue;
        }
        let before = w[..i].trim_end_matches('"');
        let name = before.rsplit(|c: char| !name_char(c)).next().unwrap_or("");
        if !name.trim_start_matches('-').is_empty() && is_sensitive_name(name) {
            let rest = w[i + 1..].trim_matches(|c: char| !c.is_alphanumeric());
            if rest.is_empty() {
                return (w, true);
            }
            return (format!("{}***", &w[..=i]), false);
        }
    }
    let bare = w.trim_start_matches('-');
    let next = (w.starts_with("--") && is_sensitive_name(bare)) || is_scheme(&w);
    (w, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_stderr_holds_after_a_secret_name_is_redacted() {
        let said = words(
            "error: token: ghp_S1 expired; \"password\":\"S2\"; api_key:S3; Authorization: Basic S4; --token\tS5; url https://user:S6@host/x --api-key=S7 Bearer S8",
        );
        for n in 1..=8 {
            assert!(!said.contains(&format!("S{n}")), "S{n}: {said}");
        }
        assert!(
            said.contains("expired") && said.contains("url") && said.contains("host/x"),
            "{said}"
        );
        assert_eq!(words("the author: Ann"), "the author: Ann");
    }
}
