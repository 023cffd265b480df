//! A file name matched as the shell matches it (`--follow`'s quoted globs,
//! docs/contract.md §2.3): the last part of a path only.

/// Whether `name` matches `pattern`, as the shell matches a file name: `*`
/// any run of bytes, `?` one byte, `[abc]`/`[a-z]`/`[!x]` one of a set;
/// a leading `.` only by a leading `.`.
pub fn glob_match(pattern: &[u8], name: &[u8]) -> bool {
    if name.first() == Some(&b'.') && pattern.first() != Some(&b'.') {
        return false;
    }
    // The classic two-pointer match, back to the last `*` on a mismatch.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some(b'?') => {
                p += 1;
                n += 1;
                continue;
            }
            Some(b'[') => match class(&pattern[p..], name[n]) {
                Some((true, next)) => {
                    p += next;
                    n += 1;
                    continue;
                }
                Some((false, _)) => {}
                // Not closed: `[` is itself.
                None if name[n] == b'[' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                None => {}
            },
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// `[...]` at the start of `pattern`: whether `c` is in it, and its
/// length; `None` when it is not closed (then `[` is itself).
fn class(pattern: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pattern.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while let Some(&b) = pattern.get(i) {
        if b == b']' && !first {
            return Some((hit != negate, i + 1));
        }
        if pattern.get(i + 1) == Some(&b'-') && pattern.get(i + 2).is_some_and(|&e| e != b']') {
            hit |= (b..=pattern[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= b == c;
            i += 1;
        }
        first = false;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_matches_as_the_shell_does() {
        for (p, n, want) in [
            ("*.jsonl", "a.jsonl", true),
            ("*.jsonl", "a.jsonl.1", false),
            ("*.jsonl", ".a.jsonl", false),
            (".*.jsonl", ".a.jsonl", true),
            ("run-?.log", "run-1.log", true),
            ("run-?.log", "run-12.log", false),
            ("[ab]*", "bx", true),
            ("[!ab]*", "bx", false),
            ("[a-c]x", "bx", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("[x", "[x", true),
        ] {
            assert_eq!(glob_match(p.as_bytes(), n.as_bytes()), want, "{p} {n}");
        }
    }
}
