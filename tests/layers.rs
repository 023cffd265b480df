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

/// The most lines a production function may span, from the line of its
/// `fn` to its closing brace (STYLE, "functions keep their size too"). A
/// function that grows past it is split into named steps when it grows.
const FN_LIMIT: usize = 80;

/// The functions allowed past `FN_LIMIT`, as (file under `src/`, name,
/// why): tables written out as data, and the hot walker only while a
/// split measurably costs speed. Each entry must still be over the limit.
const LONG_FNS: &[(&str, &str, &str)] = &[];

/// `code` with its comments, strings and character literals blanked to
/// spaces, newlines kept so offsets and line numbers hold: what is left
/// is the code's own braces and keywords. Braces are counted on this,
/// not read from rustfmt's indentation, so a one-line body, a brace in a
/// string or a `'{'` reads as the compiler reads it.
fn blank(code: &str) -> Vec<u8> {
    let b = code.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !is_ident(b[i - 1]);
        let end = if b[i..].starts_with(b"//") {
            b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |k| i + k)
        } else if b[i..].starts_with(b"/*") {
            block_comment_end(b, i)
        } else if b[i] == b'"' {
            string_end(b, i + 1)
        } else if let Some(end) = (b[i] == b'\'').then(|| char_end(b, i)).flatten() {
            end
        } else if let Some(end) = word_start.then(|| prefixed_literal_end(b, i)).flatten() {
            end
        } else {
            i += 1;
            continue;
        };
        for c in &mut out[i..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        i = end;
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The end of the `/* */` comment at `at`; they nest.
fn block_comment_end(b: &[u8], at: usize) -> usize {
    let (mut depth, mut i) = (0, at);
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// The end of a string whose text starts at `from`, past its closing quote.
fn string_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the character literal at `at` (`'{'`, `'\''`, `'é'`), or
/// None for a lifetime or a label (`'a`, `'outer:`).
fn char_end(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at + 1) == Some(&b'\\') {
        let close = b[at + 3..].iter().position(|&c| c == b'\'')?;
        return Some(at + 3 + close + 1);
    }
    let first = *b.get(at + 1)?;
    let width = match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    };
    (b.get(at + 1 + width) == Some(&b'\'')).then_some(at + 2 + width)
}

/// The end of the literal with a prefix at `at`: a raw string (`r"…"`,
/// `r#"…"#`, `br"…"`, `cr"…"`), a byte or C string (`b"…"`, `c"…"`) or a
/// byte (`b'{'`); None for any other word (`return`, `r#type`).
fn prefixed_literal_end(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    let prefixed = matches!(b[i], b'b' | b'c');
    if prefixed {
        i += 1;
    }
    if b.get(i) == Some(&b'r') {
        let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
        i += 1 + hashes;
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let mut close = vec![b'"'];
        close.extend(std::iter::repeat_n(b'#', hashes));
        let end = b[i + 1..].windows(close.len()).position(|w| w == close)?;
        return Some(i + 1 + end + close.len());
    }
    match b.get(i) {
        Some(b'"') if prefixed => Some(string_end(b, i + 1)),
        Some(b'\'') if b[at] == b'b' => char_end(b, i),
        _ => None,
    }
}

/// A function with a body, as the finder reads it: its name, the line of
/// its `fn` and its length in lines, from that line to its closing brace.
#[derive(Debug, PartialEq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// Every function with a body in `code`: free functions, methods of an
/// `impl`, a trait's default methods, and functions nested in another
/// (each on its own; its lines count in its parent's too). A signature
/// may span lines and hold generics, `where` clauses and `fn` types; a
/// declaration without a body (`fn f();`) is no function here.
fn functions(code: &str) -> Vec<Function> {
    let b = blank(code);
    let newlines: Vec<usize> = (0..b.len()).filter(|&k| b[k] == b'\n').collect();
    let line_of = |at: usize| 1 + newlines.partition_point(|&n| n < at);
    let mut out = vec![];
    let mut at = 0;
    while let Some(k) = b[at..]
        .windows(3)
        .position(|w| w[..2] == *b"fn" && w[2] == b' ')
    {
        let fn_at = at + k;
        at = fn_at + 3;
        if fn_at > 0 && is_ident(b[fn_at - 1]) {
            continue;
        }
        let name_len = b[at..].iter().take_while(|&&c| is_ident(c)).count();
        if name_len == 0 {
            continue;
        }
        let name = code[at..at + name_len].to_string();
        let Some(open) = body_start(&b, at + name_len) else {
            continue;
        };
        let close = matching_brace(&b, open);
        out.push(Function {
            name,
            line: line_of(fn_at),
            lines: line_of(close) - line_of(fn_at) + 1,
        });
    }
    out
}

/// The `{` that opens the body of the function whose signature goes on
/// from `from`, or None at a `;` first: the first of either outside the
/// signature's parentheses and brackets.
fn body_start(b: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, &c) in b[from..].iter().enumerate() {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b';' if depth == 0 => return None,
            b'{' if depth == 0 => return Some(from + k),
            _ => {}
        }
    }
    None
}

/// The `}` that closes the `{` at `open`.
fn matching_brace(b: &[u8], open: usize) -> usize {
    let mut depth = 0;
    for (k, &c) in b[open..].iter().enumerate() {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return open + k;
                }
            }
            _ => {}
        }
    }
    b.len() - 1
}

/// Every production function under `src` (test modules left out, as the
/// rooms leave them out) longer than `FN_LIMIT`, as (file, function).
fn long_functions(src: &Path) -> Vec<(String, Function)> {
    sources(src)
        .into_iter()
        .flat_map(|(rel, text)| {
            let file = rel.display().to_string();
            functions(code_of(&text))
                .into_iter()
                .filter(|f| f.lines > FN_LIMIT)
                .map(move |f| (file.clone(), f))
        })
        .collect()
}

/// The long functions under `src` that `allowed` does not name, as
/// `file: fn name, N lines (from line L)`.
fn overlong(src: &Path, allowed: &[(&str, &str, &str)]) -> Vec<String> {
    long_functions(src)
        .into_iter()
        .filter(|(file, f)| !allowed.iter().any(|(p, n, _)| p == file && *n == f.name))
        .map(|(file, f)| {
            format!(
                "{file}: fn {}, {} lines (from line {}; limit {FN_LIMIT})",
                f.name, f.lines, f.line
            )
        })
        .collect()
}

#[test]
fn every_function_keeps_to_its_size() {
    let bad = overlong(&src(), LONG_FNS);
    assert!(
        bad.is_empty(),
        "functions over {FN_LIMIT} lines: split each into named steps, \
         or, for a table, add it to LONG_FNS with why:\n{}",
        bad.join("\n")
    );
}

/// The allow-list stays short and true: an entry that is back under the
/// limit, or gone, is taken off.
#[test]
fn every_allowed_long_function_is_still_long() {
    let long = long_functions(&src());
    let stale: Vec<String> = LONG_FNS
        .iter()
        .filter(|(p, n, _)| !long.iter().any(|(file, f)| file == p && f.name == *n))
        .map(|(p, n, _)| format!("{p}: fn {n}"))
        .collect();
    assert!(
        stale.is_empty(),
        "on LONG_FNS but not over {FN_LIMIT} lines: {stale:?}"
    );
    assert!(LONG_FNS.iter().all(|(_, _, why)| !why.is_empty()));
}

#[test]
fn functions_are_found_with_their_lengths() {
    let code = r####"
/// A doc comment: fn not_a_function() {
pub(crate) fn generic<'a, T: Into<String>>(
    x: &'a str,
    f: fn(u8) -> bool,
) -> Result<(), Box<dyn Fn() -> T>>
where
    T: Clone,
{
    let s = "a } brace in a string";
    let raw = r#"and "}" in a raw one"#;
    let c = '}';
    let b = b'{';
    let e = '\'';
    // a comment }
    /* a block /* nested } */ comment */
    'outer: for _ in 0..1 { break 'outer; }
    let close = |y: u8| { y + 1 };
    fn nested(y: u8) -> u8 {
        y
    }
}
impl<T> Thing<T> where T: Copy {
    fn method(&self) -> u8 { 1 }
}
trait Named {
    fn declared(&self);
    fn default_method(&self) -> u8 {
        let s = "{{";
        2
    }
}
fn after() {}
"####;
    let found: Vec<(String, usize, usize)> = functions(code)
        .into_iter()
        .map(|f| (f.name, f.line, f.lines))
        .collect();
    let want = [
        ("generic", 3, 20),
        ("nested", 19, 3),
        ("method", 24, 1),
        ("default_method", 28, 4),
        ("after", 33, 1),
    ]
    .map(|(name, line, lines)| (name.to_string(), line, lines));
    assert_eq!(found, want);
}

#[test]
fn a_function_past_its_size_is_found() {
    let dir = std::env::temp_dir().join(format!("aoitap-fns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("check")).unwrap();
    let body = |n: usize| "    x += 1;\n".repeat(n);
    let text = format!(
        "fn fits() {{\n{}}}\nfn long() {{\n{}}}\nfn table() {{\n{}}}\n\
         #[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{}    }}\n}}\n",
        body(78),
        body(79),
        body(100),
        body(100)
    );
    std::fs::write(dir.join("check/f.rs"), text).unwrap();
    let found = overlong(&dir, &[("check/f.rs", "table", "a table")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        found,
        ["check/f.rs: fn long, 81 lines (from line 81; limit 80)"]
    );
}
