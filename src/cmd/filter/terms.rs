//! What aoitap reads of a program's terms before jaq loads it: each
//! `$__loc__` made its value, what jaq would run without a bound made
//! bounded (`..`, an interpolation) or refused (a definition that calls
//! itself), and what cannot run one event at a time (`input`, `inputs`).

use std::borrow::Cow;
use std::collections::HashSet;

use jaq_core::load;
use jaq_core::load::lex::{StrPart, Tok, Token};
use jaq_core::load::parse::{BinaryOp, Def, Pattern, Term};
use jaq_core::path::Part;

/// `$__loc__` made what jq makes it, `{"file":"<top-level>","line":N}`,
/// N the program's line it stands on (jq 1.6 and libjq 1.7 name a program
/// given on the command line `<top-level>`, whatever jq's manual shows):
/// jaq has no such variable, so each use is replaced by its value before
/// the program is loaded.
pub(super) fn located(code: &str) -> Cow<'_, str> {
    const LOC: &str = "$__loc__";
    if !code.contains(LOC) {
        return Cow::Borrowed(code);
    }
    let Some(term) = load::parse(code, |p| p.term()) else {
        return Cow::Borrowed(code);
    };
    // Where each use stands, and whether it is `{$__loc__}`'s shorthand
    // for `{"__loc__": $__loc__}`.
    let mut at = vec![];
    let mut todo = vec![&term];
    let offset = |v: &str| v.as_ptr() as usize - code.as_ptr() as usize;
    while let Some(t) = todo.pop() {
        match t {
            Term::Var(v) if *v == LOC => at.push((offset(v), false)),
            Term::Obj(kvs) => {
                for (k, v) in kvs {
                    if let (Term::Var(name), None) = (k, v)
                        && *name == LOC
                    {
                        at.push((offset(name), true));
                    }
                }
            }
            _ => {}
        }
        children(t, |c| todo.push(c));
    }
    // A shorthand's variable is also seen as a term: the shorthand wins.
    at.sort_unstable_by_key(|&(a, shorthand)| (a, !shorthand));
    at.dedup_by_key(|(a, _)| *a);
    let mut out = String::with_capacity(code.len() + 48 * at.len());
    let mut from = 0;
    for (a, shorthand) in at {
        let line = code[..a].matches('\n').count() + 1;
        out.push_str(&code[from..a]);
        if shorthand {
            out.push_str("\"__loc__\": ");
        }
        out.push_str(&format!(r#"({{"file":"<top-level>","line":{line}}})"#));
        from = a + LOC.len();
    }
    out.push_str(&code[from..]);
    Cow::Owned(out)
}

/// The program with what jaq would run without a bound made bounded
/// (docs/contract.md §3.4), rewritten in its text, so the loader still says
/// where a mistake is (a program the lexer refuses is left as it is):
///
/// - each `..` is the library's `recurse`, as jq defines it, on a deep
///   value: jaq's own `..` nests one iterator per level, so a value
///   99,990 deep took minutes, and `recurse` takes one pass;
/// - each interpolation `\(f)` is `\((f) | __shallow)`: jaq prints the
///   value by recursion, and a value built 2,000,000 deep would overflow
///   the stack; past the depth an event may have it is an error;
/// - each `|` is `| __tick |`: a program busy in one step (nested `.[]`
///   over large arrays) sees a signal at its next pipe, as the library's
///   loops do, and the report is still written.
pub(super) fn guarded(code: &str) -> Cow<'_, str> {
    let Ok(tokens) = load::Lexer::new(code).lex() else {
        return Cow::Borrowed(code);
    };
    // Each edit: where, how many bytes it replaces, and with what.
    let mut edits: Vec<(usize, usize, &str)> = vec![];
    let offset = |s: &str| s.as_ptr() as usize - code.as_ptr() as usize;
    let mut todo: Vec<&Token<&str>> = tokens.iter().collect();
    while let Some(Token(text, tok)) = todo.pop() {
        match tok {
            Tok::Sym if *text == ".." => edits.push((offset(text), 2, "(__recurse)")),
            Tok::Sym if *text == "|" => edits.push((offset(text), 1, "| __tick |")),
            Tok::Block(inner) => todo.extend(inner),
            Tok::Str(parts) => {
                for part in parts {
                    if let StrPart::Term(block @ Token(full, _)) = part {
                        let at = offset(full);
                        edits.push((at + 1, 0, "("));
                        edits.push((at + full.len() - 1, 0, ") | __shallow"));
                        todo.push(block);
                    }
                }
            }
            _ => {}
        }
    }
    if edits.is_empty() {
        return Cow::Borrowed(code);
    }
    // An insertion before a replacement at the same place (`"\\(..)"`).
    edits.sort_unstable_by_key(|&(at, len, _)| (at, len));
    let mut out = String::with_capacity(code.len() + 16 * edits.len());
    let mut from = 0;
    for (at, len, with) in edits {
        out.push_str(&code[from..at]);
        out.push_str(with);
        from = at + len;
    }
    out.push_str(&code[from..]);
    Cow::Owned(out)
}

/// Refuse a program whose own definitions call themselves, directly or
/// through each other: jaq bounds no recursion, and a runaway one ends
/// the process (a stack overflow is an abort, not an error). The
/// library's `recurse`, `walk`, `until`, `while`, `repeat`, `limit` and
/// `reduce` do what a recursive definition would, bounded by the data.
pub(super) fn refuse_recursion(code: &str) -> Result<(), String> {
    let Some(term) = load::parse(code, |p| p.term()) else {
        // Not a term the parser takes: the loader says why.
        return Ok(());
    };
    let mut defs = Defs::default();
    defs.resolve(&term, &mut vec![], None)?;
    for (id, name) in defs.names.iter().enumerate() {
        if reaches(&defs.calls, id) {
            return Err(format!(
                "def {name} calls itself: aoitap filter runs no recursive definition (a runaway \
                 recursion would overflow the stack); use recurse, walk, until, while, limit or \
                 reduce"
            ));
        }
    }
    Ok(())
}

/// The program's definitions, each one by its place (`def g: def g: 3;
/// g; g` has two, and neither calls itself, as jq scopes them), and the
/// definitions each one's body calls.
#[derive(Default)]
struct Defs {
    names: Vec<String>,
    calls: Vec<HashSet<usize>>,
}

impl Defs {
    /// Resolve each call in `t` to the definition it names, as jq does:
    /// the innermost one in `scope` of that name and arity (a filter
    /// argument is no definition); `inside` is the definition `t` is the
    /// body of.
    fn resolve<'a>(
        &mut self,
        t: &'a Term<&'a str>,
        scope: &mut Vec<(String, Option<usize>)>,
        inside: Option<usize>,
    ) -> Result<(), String> {
        match t {
            Term::Def(defs, rest) => {
                let depth = scope.len();
                for Def { name, args, body } in defs {
                    // `f/1` and `f/0` are two filters, as jq has them.
                    let id = self.names.len();
                    self.names.push(format!("{name}/{}", args.len()));
                    self.calls.push(HashSet::new());
                    scope.push((format!("{name}/{}", args.len()), Some(id)));
                    let own = scope.len();
                    for a in args.iter().filter(|a| !a.starts_with('$')) {
                        scope.push((format!("{a}/0"), None));
                    }
                    self.resolve(body, scope, Some(id))?;
                    scope.truncate(own);
                }
                self.resolve(rest, scope, inside)?;
                scope.truncate(depth);
                return Ok(());
            }
            Term::Call(f, fargs) => {
                let key = format!("{f}/{}", fargs.len());
                match scope.iter().rev().find(|(n, _)| *n == key) {
                    Some((_, Some(id))) => {
                        if let Some(from) = inside {
                            self.calls[from].insert(*id);
                        }
                    }
                    Some((_, None)) => {}
                    // One event at a time (docs/contract.md §1.5): there is no next
                    // input to read, and jq's would be the next event.
                    None if matches!(key.as_str(), "input/0" | "inputs/0") => {
                        return Err(format!(
                            "{f} is refused: aoitap filter runs the program on one event at a \
                             time, so there is no next input to read"
                        ));
                    }
                    None => {}
                }
            }
            _ => {}
        }
        let mut result = Ok(());
        children(t, &mut |c| {
            if result.is_ok() {
                result = self.resolve(c, scope, inside);
            }
        });
        result
    }
}

/// Whether definition `from`'s body calls itself, through others.
fn reaches(calls: &[HashSet<usize>], from: usize) -> bool {
    let mut seen = HashSet::new();
    let mut todo: Vec<usize> = vec![from];
    while let Some(f) = todo.pop() {
        for &g in &calls[f] {
            if g == from {
                return true;
            }
            if seen.insert(g) {
                todo.push(g);
            }
        }
    }
    false
}

/// Each term directly inside `t`.
fn children<'a>(t: &'a Term<&'a str>, mut sub: impl FnMut(&'a Term<&'a str>)) {
    match t {
        Term::Id | Term::Recurse | Term::Num(_) | Term::Break(_) | Term::Var(_) => {}
        Term::Str(_, parts) => {
            for p in parts {
                if let StrPart::Term(t) = p {
                    sub(t);
                }
            }
        }
        Term::Arr(a) => a.iter().for_each(|t| sub(t)),
        Term::Obj(kvs) => {
            for (k, v) in kvs {
                sub(k);
                if let Some(v) = v {
                    sub(v);
                }
            }
        }
        Term::Neg(t) | Term::Label(_, t) => sub(t),
        Term::BinOp(l, op, r) => {
            sub(l);
            if let BinaryOp::Pipe(Some(p)) = op {
                pattern(p, &mut sub);
            }
            sub(r);
        }
        Term::Fold(_, xs, p, args) => {
            sub(xs);
            pattern(p, &mut sub);
            args.iter().for_each(&mut sub);
        }
        Term::TryCatch(t, c) => {
            sub(t);
            if let Some(c) = c {
                sub(c);
            }
        }
        Term::IfThenElse(branches, other) => {
            for (c, then) in branches {
                sub(c);
                sub(then);
            }
            if let Some(o) = other {
                sub(o);
            }
        }
        Term::Def(defs, rest) => {
            defs.iter().for_each(|d| sub(&d.body));
            sub(rest);
        }
        Term::Call(_, args) => args.iter().for_each(&mut sub),
        Term::Path(t, path) => {
            sub(t);
            for (part, _) in &path.0 {
                match part {
                    Part::Index(i) => sub(i),
                    Part::Range(a, b) => {
                        a.iter().chain(b.iter()).for_each(&mut sub);
                    }
                }
            }
        }
    }
}

/// The terms inside a binding pattern (object keys).
fn pattern<'a>(p: &'a Pattern<&'a str>, sub: &mut impl FnMut(&'a Term<&'a str>)) {
    match p {
        Pattern::Var(_) => {}
        Pattern::Arr(ps) => ps.iter().for_each(|p| pattern(p, sub)),
        Pattern::Obj(kvs) => {
            for (k, p) in kvs {
                sub(k);
                pattern(p, sub);
            }
        }
    }
}
