//! The shape of `src/` (STYLE, layout): a module imports only from the
//! layers below its own, and the files of one folder never import each
//! other in a circle. Read from the paths every file names (`crate::`,
//! `super::`, `self::`, and a folder's own children); no dependency, no
//! build of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module's layer, from the bottom (docs/architecture.md
/// shows this table; tests/docs.rs holds it there). `say` and `say_part`
/// are the crate root's output macros, which every layer may use.
pub(crate) const LAYERS: &[&[&str]] = &[
    &["json", "text", "exit", "say", "say_part"],
    &["input", "signal"],
    &["check"],
    &["output"],
    &["config"],
    &["cli"],
    // The engine the stream commands share: below every command.
    &["stream"],
    &["cmd"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// A module by its path from the crate root (`["check", "runs"]`).
type Module = Vec<String>;

/// Every `.rs` file under `src` (its path from `src`) and its text.
fn sources(src: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = vec![];
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.strip_prefix(src).unwrap().to_path_buf(), text));
            }
        }
    }
    out.sort();
    out
}

/// Every module of `src/` and the text of its code, its test module left
/// out (a test module's `super::` is its own file).
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    for (rel, text) in sources(src) {
        let mut module: Module = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_str().unwrap().to_string())
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        if matches!(module.as_slice(), [m] if m == "lib" || m == "main") {
            continue;
        }
        out.insert(module, code_of(&text).to_string());
    }
    out
}

/// A file's code: all before its `#[cfg(test)] mod tests`. Only the test
/// module ends it: a `#[cfg(test)]` item anywhere else (inside an `impl`)
/// is code like any other, read and counted.
fn code_of(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let at = from + at;
        let rest = text[at + "#[cfg(test)]".len()..].trim_start();
        // `pub(crate) mod tests`: a test module other tests' helpers use.
        let rest = match rest.strip_prefix("pub") {
            Some(r) if r.starts_with('(') => r[r.find(')').map_or(0, |k| k + 1)..].trim_start(),
            Some(r) => r.trim_start(),
            None => rest,
        };
        let at_line_start = at == 0 || text.as_bytes()[at - 1] == b'\n';
        if at_line_start && rest.starts_with("mod tests") {
            return &text[..at];
        }
        from = at + 1;
    }
    text
}

/// The most lines of code (before the test module) a file may hold: a
/// command's file 500, any other 800 (STYLE, "rooms keep their size"). A
/// room that grows past it is split along a seam when it grows.
fn limit(path: &Path) -> usize {
    if path.components().any(|c| c.as_os_str() == "cmd") {
        500
    } else {
        800
    }
}

/// The files over their limit, as `path: N lines (limit L)`.
fn oversized(src: &Path) -> Vec<String> {
    sources(src)
        .into_iter()
        .filter_map(|(rel, text)| {
            let lines = code_of(&text).lines().count();
            (lines > limit(&rel))
                .then(|| format!("{}: {lines} lines (limit {})", rel.display(), limit(&rel)))
        })
        .collect()
}

/// The paths `code` names, each as written (`super::runs::Runs`), with
/// every `use` tree spread into its paths.
fn paths(code: &str) -> Vec<String> {
    let mut out = vec![];
    // A `use` item starts a line; its tree may span lines, to the `;`.
    let starts = std::iter::once(0).chain(code.match_indices('\n').map(|(i, _)| i + 1));
    for from in starts {
        let l = code[from..].trim_start();
        let l = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|p| l.strip_prefix(p))
            .unwrap_or(l);
        if let Some(tree) = l.strip_prefix("use ")
            && let Some(end) = tree.find(';')
        {
            spread("", &tree[..end], &mut out);
        }
    }
    // Paths in code, outside `use`: `crate::text::plural(...)`.
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let word_start =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || b"_:".contains(&bytes[i - 1]));
        if word_start && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
            let mut j = i;
            while j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric()
                    || bytes[j] == b'_'
                    || code[j..].starts_with("::"))
            {
                j += if code[j..].starts_with("::") { 2 } else { 1 };
            }
            let p = code[i..j].trim_end_matches(':');
            // `pub(in crate::check)` is a visibility, not an import.
            if p.contains("::") && !code[..i].ends_with("(in ") {
                out.push(p.to_string());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The paths of one `use` tree under `prefix`.
fn spread(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap().trim();
        out.push(format!("{prefix}{path}"));
        return;
    };
    let head = format!("{prefix}{}", &tree[..open]);
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let (mut depth, mut from) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                spread(&head, &inner[from..k], out);
                from = k + 1;
            }
            _ => {}
        }
    }
    if !inner[from..].trim().is_empty() {
        spread(&head, &inner[from..], out);
    }
}

/// Every import as (module, the module it names), resolved from the
/// crate root. A path to an item of the crate root (`crate::say`) names
/// the item.
fn edges(src: &Path) -> BTreeSet<(Module, Module)> {
    let mods = modules(src);
    let children = |m: &Module| -> BTreeSet<String> {
        mods.keys()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k.last().unwrap().clone())
            .collect()
    };
    let mut out = BTreeSet::new();
    for (module, code) in &mods {
        let own = children(module);
        for path in paths(code) {
            let segs: Vec<&str> = path.split("::").collect();
            let (mut full, mut k): (Module, usize) = match segs[0] {
                "crate" => (vec![], 1),
                "self" => (module.clone(), 1),
                "super" => (module.clone(), 0),
                // A folder names its own children without a prefix.
                s if own.contains(s) => (module.clone(), 0),
                _ => continue,
            };
            while segs.get(k) == Some(&"super") {
                full.pop();
                k += 1;
            }
            full.extend(segs[k..].iter().map(|s| s.to_string()));
            let target = (1..=full.len())
                .rev()
                .map(|n| full[..n].to_vec())
                .find(|p| mods.contains_key(p))
                .unwrap_or_else(|| full.iter().take(1).cloned().collect());
            if !target.is_empty() && &target != module {
                out.insert((module.clone(), target));
            }
        }
    }
    out
}

/// The imports between top-level modules that go up or sideways, as
/// `from -> to` lines.
fn upward(edges: &BTreeSet<(Module, Module)>) -> Vec<String> {
    let top: BTreeSet<(&str, &str)> = edges
        .iter()
        .map(|(a, b)| (a[0].as_str(), b[0].as_str()))
        .filter(|(a, b)| a != b)
        .collect();
    top.into_iter()
        .filter(|(from, to)| match (layer(from), layer(to)) {
            (Some(f), Some(t)) => t >= f,
            // A module no layer names is itself a finding.
            _ => true,
        })
        .map(|(from, to)| format!("{from} -> {to}"))
        .collect()
}

/// The circles among the files of each folder: imports between two of
/// its files (a folder's `mod.rs` is one of them, a subfolder another),
/// as `folder: a -> b -> a` lines.
fn circles(edges: &BTreeSet<(Module, Module)>) -> Vec<String> {
    let folders: BTreeSet<Module> = edges
        .iter()
        .flat_map(|(a, b)| [a, b])
        .flat_map(|m| (0..m.len()).map(|n| m[..n].to_vec()))
        .collect();
    let mut out = vec![];
    for folder in folders {
        // A file of the folder: the folder itself, or the child holding m.
        let file = |m: &Module| -> Option<String> {
            if !m.starts_with(&folder) {
                return None;
            }
            Some(
                m.get(folder.len())
                    .cloned()
                    .unwrap_or_else(|| "mod".to_string()),
            )
        };
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            if let (Some(x), Some(y)) = (file(a), file(b))
                && x != y
            {
                graph.entry(x).or_default().insert(y);
            }
        }
        if let Some(cycle) = cycle(&graph) {
            let name = if folder.is_empty() {
                "src".to_string()
            } else {
                folder.join("/")
            };
            out.push(format!("{name}: {}", cycle.join(" -> ")));
        }
    }
    out
}

/// One circle in `graph`, if it has any, from a node back to itself.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut c = path[at..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for next in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut vec![], &mut done))
}

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let found = edges(&src());
    assert!(found.len() > 10, "read too little: {found:?}");
    let bad = upward(&found);
    assert!(bad.is_empty(), "imports against the layers: {bad:?}");
}

#[test]
fn no_files_of_a_folder_import_each_other_in_a_circle() {
    let found = edges(&src());
    let bad = circles(&found);
    assert!(bad.is_empty(), "import circles: {bad:?}");
}

#[test]
fn every_file_keeps_to_its_room_size() {
    let bad = oversized(&src());
    assert!(bad.is_empty(), "files over their size: {bad:?}");
}

#[test]
fn a_file_is_cut_only_at_its_test_module() {
    let text = "fn a() {}\nimpl X {\n    #[cfg(test)]\n    fn only_in_tests() { crate::check::x(); }\n}\n\
                #[cfg(test)]\nmod tests {\n    use crate::cmd::y;\n}\n";
    let code = code_of(text);
    assert!(
        code.contains("only_in_tests"),
        "cut inside the impl: {code:?}"
    );
    assert!(!code.contains("mod tests"));
    assert_eq!(code.lines().count(), 5);
    assert_eq!(code_of("fn a() {}\n"), "fn a() {}\n");
    let shared = "fn b() {}\n#[cfg(test)]\npub(in crate::check) mod tests {\n}\n";
    assert_eq!(code_of(shared), "fn b() {}\n");
}

#[test]
fn a_file_past_its_room_is_found() {
    let dir = std::env::temp_dir().join(format!("aoitap-rooms-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cmd/lint")).unwrap();
    std::fs::create_dir_all(dir.join("check")).unwrap();
    let lines = |n: usize| "fn f() {}\n".repeat(n);
    std::fs::write(dir.join("cmd/lint/big.rs"), lines(501)).unwrap();
    std::fs::write(dir.join("cmd/ok.rs"), lines(500)).unwrap();
    std::fs::write(dir.join("check/ok.rs"), lines(800)).unwrap();
    // Tests do not count against the room.
    let tested = format!(
        "{}#[cfg(test)]\nmod tests {{\n{}}}\n",
        lines(700),
        lines(400)
    );
    std::fs::write(dir.join("check/tested.rs"), tested).unwrap();
    std::fs::write(dir.join("check/big.rs"), lines(801)).unwrap();
    let found = oversized(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        found,
        [
            "check/big.rs: 801 lines (limit 800)",
            "cmd/lint/big.rs: 501 lines (limit 500)"
        ]
    );
}

fn m(path: &str) -> Module {
    path.split("::").map(str::to_string).collect()
}

#[test]
fn an_import_from_above_or_from_an_unknown_module_is_found() {
    let e = |from: &str, to: &str| (m(from), m(to));
    let edges: BTreeSet<_> = [
        e("check", "input"),
        e("input::scan", "check::schema"),
        e("output", "config"),
        e("json", "text"),
        e("check", "stream"),
        e("check::runs", "check::seq"),
    ]
    .into();
    assert_eq!(
        upward(&edges),
        [
            "check -> stream",
            "input -> check",
            "json -> text",
            "output -> config"
        ]
    );
}

#[test]
fn a_circle_inside_a_folder_is_found_and_a_chain_is_not() {
    let e = |from: &str, to: &str| (m(from), m(to));
    let chain: BTreeSet<_> = [
        e("check", "check::checker"),
        e("check::checker", "check::runs"),
        e("check::protocol::aoi", "check::runs"),
    ]
    .into();
    assert!(circles(&chain).is_empty());
    // A child naming its folder's re-export closes a circle with mod.rs.
    let through_mod: BTreeSet<_> = [e("check", "check::runs"), e("check::runs", "check")].into();
    assert_eq!(circles(&through_mod), ["check: mod -> runs -> mod"]);
    // A subfolder is one file of its parent folder.
    let nested: BTreeSet<_> = [
        e("check::protocol::aoi", "check::runs"),
        e("check::runs", "check::protocol"),
    ]
    .into();
    assert_eq!(circles(&nested), ["check: protocol -> runs -> protocol"]);
}

#[test]
fn paths_are_read_from_use_trees_and_code() {
    let code = "use super::{Cause, framework::Count};\n\
                pub use facts::*;\n\
                use crate::text::{self, plural as p};\n\
                fn f() { crate::text::quote(x); let y = super::secrets::scan(); }";
    let found = paths(code);
    for want in [
        "super::Cause",
        "super::framework::Count",
        "facts::*",
        "crate::text::self",
        "crate::text::plural",
        "crate::text::quote",
        "super::secrets::scan",
    ] {
        assert!(found.iter().any(|p| p == want), "{want} not in {found:?}");
    }
}

/// Commands ask a protocol what they need (its payload, its type field,
/// its outcome events, its mapping to AOI 1.0), never which one it is
/// (STYLE, "The third pass"): no file under cmd/, output/ or stream/ names
/// a variant of `Protocol`, so a new protocol or profile touches its own
/// module, the detector and the catalogue.
#[test]
fn no_command_names_a_protocols_variant() {
    let named: Vec<String> = sources(&src())
        .into_iter()
        .filter(|(path, _)| {
            ["cmd", "output", "stream"]
                .iter()
                .any(|d| path.starts_with(d))
        })
        .filter(|(_, text)| code_of(text).contains("Protocol::"))
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(named.is_empty(), "a protocol's variant named in {named:?}");
}
