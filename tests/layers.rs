//! The layers of `src/` (STYLE, layout): a module imports only from the
//! layers below its own. Read from the `crate::` paths of every file; no
//! dependency, no build of its own.

use std::collections::BTreeSet;
use std::path::Path;

/// Each top-level module's layer, from the bottom. `say` and `say_part`
/// are the crate root's output macros, which every layer may use.
const LAYERS: &[&[&str]] = &[
    &["json", "text", "exit", "say", "say_part"],
    &["input", "signal"],
    &["check"],
    &["output"],
    &["config"],
    &["cli"],
    // The man page is rendered from clap's command (cli/doc/ in STYLE).
    &["man"],
    // The engine the stream commands share: below every command.
    &["stream"],
    &["cmd"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every `crate::X` a file of `src/` names, as (module of the file, X).
fn edges(src: &Path) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let first = rel.components().next().unwrap().as_os_str();
            let module = first.to_str().unwrap().trim_end_matches(".rs").to_string();
            if matches!(module.as_str(), "lib" | "main") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, _) in text.match_indices("crate::") {
                let name: String = text[i + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    out.insert((module.clone(), name));
                }
            }
        }
    }
    out
}

/// The imports that go up or sideways, as `from -> to` lines.
fn upward(edges: &BTreeSet<(String, String)>) -> Vec<String> {
    edges
        .iter()
        .filter(|(from, to)| match (layer(from), layer(to)) {
            (Some(f), Some(t)) => t >= f,
            // A module no layer names is itself a finding.
            _ => true,
        })
        .map(|(from, to)| format!("{from} -> {to}"))
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = edges(&src);
    assert!(found.len() > 10, "read too little: {found:?}");
    let bad = upward(&found);
    assert!(bad.is_empty(), "imports against the layers: {bad:?}");
}

#[test]
fn an_import_from_above_or_from_an_unknown_module_is_found() {
    let e = |from: &str, to: &str| (from.to_string(), to.to_string());
    let edges: BTreeSet<_> = [
        e("check", "input"),
        e("input", "check"),
        e("output", "config"),
        e("json", "text"),
        e("check", "stream"),
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
