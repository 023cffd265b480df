//! Exposed secrets in a parsed line (docs/contract.md §7.1; spec §11;
//! AFDATA "Secret protection"): a member at any depth whose key ends in
//! `_secret` or `_SECRET` (or is a `--secret-name`, matched exactly) and
//! whose value is not exactly `"***"`; and under a key ending in `_url` or
//! `_URL`, what `url.rs` finds in the URL.
//!
//! The walk (`json/walk.rs`) marks a line whose keys carry those suffixes, so
//! only marked lines are searched here (every line when `--secret-name`
//! is given). Each exposure keeps the byte spans `--redact` replaces, so a
//! redacted line is the same bytes with only those spans changed. Nothing
//! here ever copies a value into a message: findings name the key path.

use super::exposure::Exposure;
use super::names::{is_secret_name, is_url_name};
use super::url::url_exposures;
use crate::json::{Children, Event, Kind};

/// Every exposure in `ev`, into `out` (cleared first).
pub fn scan(ev: &Event<'_>, names: &[String], out: &mut Vec<Exposure>) {
    out.clear();
    if !ev.has_marked_keys() && names.is_empty() {
        return;
    }
    let root = ev.as_value();
    // An explicit stack, not recursion: nesting is limited only by the
    // line (json/mod.rs), and the call stack must not be.
    let mut stack: Vec<(Children<'_>, usize, u64)> = vec![(root.children(), 0, 0)];
    let mut path = String::new();
    while let Some((kids, base, index)) = stack.last_mut() {
        let Some((key, value)) = kids.next() else {
            stack.pop();
            continue;
        };
        let base = *base;
        path.truncate(base);
        let object = kids.is_object();
        if object {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
        } else {
            path.push_str(&format!("[{index}]"));
            *index += 1;
        }
        let name = key.as_bytes();
        if object && is_secret_name(name, names) {
            if value.raw() != b"\"***\"" {
                out.push(Exposure {
                    path: path.clone(),
                    url: false,
                    spans: vec![value.span()],
                    whole: true,
                });
            }
            continue;
        }
        if object && is_url_name(name) && value.kind() == Kind::String {
            url_exposures(&value, &path, names, out);
            continue;
        }
        // A list of URLs under a `_url` key: each string in it, as one.
        if object && is_url_name(name) && value.kind() == Kind::Array {
            for (k, (_, v)) in value.children().enumerate() {
                if v.kind() == Kind::String {
                    url_exposures(&v, &format!("{path}[{k}]"), names, out);
                }
            }
            continue;
        }
        if matches!(value.kind(), Kind::Object | Kind::Array) {
            stack.push((value.children(), path.len(), 0));
        }
    }
}
