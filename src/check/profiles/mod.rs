//! Producer profiles as data (docs/contract.md §6.3): the model a TOML file
//! is read into (`model.rs`, its matches in `matching.rs`), reading one
//! (`load.rs`), the built-ins (`builtin.rs`, one file each in `builtin/`),
//! and which built-in a run's first object reads as. The rules a profile
//! makes are `protocols/profile.rs`'s.

mod builtin;
mod load;
pub(in crate::check) mod matching;
pub(in crate::check) mod model;

pub use builtin::builtins;
pub use load::{LoadError, parse};
pub use matching::Path;
pub use model::{Category, Form, Level, Profile, ProfileRef};

use crate::json::Event;

/// The built-in profile whose signature the run's first object matches
/// exactly, if one does (docs/contract.md §6.3, detection).
pub fn detect(ev: &Event<'_>) -> Option<ProfileRef> {
    // No agent CLI writes AOI's envelope or its closed `aoi:` types (spec
    // §8.2): such an object is an AOI stream (its head cut, if it is no
    // meta), never a producer's own. Asked first, so an AOI stream never
    // reads the built-ins.
    if ev.get("aoi").is_some() || ev.ty_bytes().is_some_and(|t| t.starts_with(b"aoi:")) {
        return None;
    }
    builtins()
        .iter()
        .copied()
        .find(|p| matching::any(&p.get().signature, ev))
}

/// `--profile NAME|FILE`: a value with a `/` or ending in `.toml` is a
/// file, anything else a built-in's name (so a file in the working
/// directory never shadows one). `protocol`: whether a name is a
/// protocol's, which a file's may not be either (the caller knows the
/// protocols; this layer is below them).
pub fn by_name_or_file(
    arg: &str,
    protocol: impl Fn(&str) -> bool,
) -> Result<ProfileRef, LoadError> {
    let is_file = arg.contains('/') || arg.ends_with(".toml");
    if !is_file {
        return builtins()
            .iter()
            .copied()
            .find(|p| p.get().name == arg)
            .ok_or_else(|| {
                let names: Vec<&str> = builtins().iter().map(|p| p.get().name.as_str()).collect();
                LoadError(format!(
                    "no built-in profile {arg:?} (one of {}; a file is named with a / or .toml, \
                     as ./{arg}.toml)",
                    names.join(", ")
                ))
            });
    }
    let text = read_file(arg)?;
    let profile = parse(&text).map_err(|e| LoadError(format!("profile {arg}: {}", e.0)))?;
    // A file cannot pass for a built-in in a report, nor for a protocol
    // (a report's `protocol` names the one or the other).
    let protocol = protocol(&profile.name);
    if protocol || builtins().iter().any(|p| p.get().name == profile.name) {
        let whose = if protocol {
            "a protocol's"
        } else {
            "a built-in's"
        };
        return Err(LoadError(format!(
            "profile {arg}: {}name {:?} is {whose}: name a profile of your own otherwise",
            load::at_key(&text, "name"),
            profile.name
        )));
    }
    // Its producer is written in every report of its runs, as a meta's
    // `tool` is, and held to the same bound.
    let bound = crate::text::IDENTITY_BYTES;
    if profile.tool().len() > bound {
        return Err(LoadError(format!(
            "profile {arg}: {}tool is {} bytes: a producer's name is at most {bound}",
            load::at_key(
                &text,
                if profile.tool.is_some() {
                    "tool"
                } else {
                    "name"
                }
            ),
            profile.tool().len()
        )));
    }
    // Named once at start: kept for the whole process.
    ProfileRef::keep(profile).map_err(LoadError)
}

/// A profile file is a small regular file: a device, a FIFO or a file
/// past `MAX_FILE_BYTES` is refused before it is read.
fn read_file(arg: &str) -> Result<String, LoadError> {
    use std::io::Read;
    let refuse = |why: String| LoadError(format!("cannot read profile {arg}: {why}"));
    let file = std::fs::File::open(arg).map_err(|e| refuse(e.to_string()))?;
    let meta = file.metadata().map_err(|e| refuse(e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    let mut text = String::new();
    let read = file
        .take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| refuse(e.to_string()))?;
    if read as u64 > MAX_FILE_BYTES {
        return Err(refuse(format!("over {} KiB", MAX_FILE_BYTES / 1024)));
    }
    Ok(text)
}

/// The largest profile file read: the built-ins are a few KiB.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_built_in_and_a_path_a_file() {
        assert_eq!(
            by_name_or_file("codex-exec", |_| false).unwrap().get().name,
            "codex-exec"
        );
        let e = by_name_or_file("codex", |_| false).unwrap_err().0;
        assert!(
            e.contains("no built-in profile") && e.contains("claude-stream"),
            "{e}"
        );
        let e = by_name_or_file("./nowhere.toml", |_| false).unwrap_err().0;
        assert!(e.contains("cannot read profile ./nowhere.toml"), "{e}");
    }
}
