//! A jq program, compiled once by the jaq crates and run on one value at
//! a time (docs/contract.md §1.5).
//!
//! Why the jaq crates (jaq-core 3.1.2, jaq-std 3.0.4, jaq-json 2.0.3, MIT,
//! pinned exactly: their API broke at each major version): a throwaway
//! prototype embedding them ran `select(.type=="hit")` over 152 MB of AOI
//! lines in 2.2 s, against 3.9 s for the jaq 3.1.2 binary and 5.1 s for
//! jq 1.6, and a compiled program runs per value with no process per line.
//!
//! Their traps, each handled here: `unwrap_valr` calls
//! `std::process::exit` on `halt` (the verdict would be lost), so a halt
//! is read as a value of its own; `env` hands the program the whole
//! environment, tokens included, so `env` and `$ENV` are `{}`; nothing
//! bounds recursion (`def f: 1+f; f` overflows the stack and aborts), so a
//! program whose own definitions call themselves is refused before it runs
//! (`terms.rs`).

use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Ctx, Vars, data};
use jaq_json::Val;

use super::plan::{GiveUp, Plan};
use super::terms::{guarded, located, refuse_recursion};

/// The most outputs of one event a plan holds before it gives the event
/// back to the interpreter.
const HELD: usize = 64;

/// Prepended to every program: `env` is `$ENV`, which is `{}`; `@csv`
/// and `@tsv`, which the jaq crates leave to their binary, as jq 1.7
/// makes them (a string quoted or escaped, null empty, a number and a
/// boolean as JSON, anything else an error).
const PRELUDE: &str = concat!(
    "def env: $ENV; ",
    // The library's loops, each step through `__tick`, which ends the
    // program once a signal has come (docs/contract.md §3.4): a program busy on one
    // event (`until(false; .+1)`, `last(range(1e15))`) stops, and the
    // report still ends. The same definitions as jaq-core's otherwise.
    "def range($from; $upto; $by): __range($from; $upto; $by) | __tick; ",
    "def range(from; upto): range(from; upto; 1); ",
    "def range(upto): range(0; upto); ",
    "def repeat(f): def rec: f, (__tick | rec); rec; ",
    "def recurse(f): def rec: ., (f | __tick | rec); rec; ",
    "def recurse: recurse(.[]?); ",
    // What the program's `..` is made (`terms::guarded`): jaq's own
    // on a shallow value, where it is fastest; the library's, one pass,
    // on a deep one, where jaq's nests one iterator per level.
    "def __recurse: if __deep then recurse else .. end; ",
    "def recurse(f; cond): recurse(f | select(cond)); ",
    "def while(cond; update): def rec: if cond then ., (update | __tick | rec) else empty end; rec; ",
    "def until(cond; update): def rec: if cond then . else update | __tick | rec end; rec; ",
    // What prints a value or walks it recurses as deep as it nests: past
    // the depth an event may have it is an error, never an abort (docs/contract.md
    // §3.4).
    "def tojson: __shallow | __tojson; ",
    "def @json: tojson; ",
    r#"def tostring: __shallow | "\(.)"; "#,
    "def @text: tostring; ",
    // jaq's own `paths` walk with its `..`: the bounded one instead.
    "def paths: skip(1; path(__recurse)); ",
    "def paths(p): skip(1; path_value(__recurse)) | if .[1] | p then .[0] else empty end; ",
    // What would print a value by recursion, bounded as `tostring` is:
    // jaq-core's `join` (which wrote an array as its JSON: jq's, here,
    // refuses one), and natives that quote their input in an error.
    r#"def join($x): reduce .[] as $i (null; (if . == null then "" else . + $x end) + ($i | if . == null then "" elif type == "boolean" or type == "number" then tojson else . end)) // ""; "#,
    "def mktime: __shallow | __mktime; ",
    "def strftime($f): __shallow | __strftime($f); ",
    "def strflocaltime($f): __shallow | __strflocaltime($f); ",
    "def tobytes: __shallow | __tobytes; ",
    // jaq-std's formats, each through the bounded `tostring` above.
    "def @html: tostring | escape_html; ",
    "def @htmld: tostring | unescape_html; ",
    "def @uri: tostring | encode_uri; ",
    "def @urid: tostring | decode_uri; ",
    "def @base64: tostring | encode_base64; ",
    "def @base64d: tostring | decode_base64; ",
    r#"def @sh: [if isarray then .[] end | if . >= "" then "'\(escape_sh)'" else tostring end] | join(" "); "#,
    "def stderr: (__shallow | stderr_empty as $x | .), .; ",
    "def debug: (__shallow | debug_empty as $x | .), .; ",
    "def debug(msgs): ((msgs | __shallow | debug_empty) as $x | .), .; ",
    "def halt_error($exit_code): (__shallow | stderr_empty), halt($exit_code); ",
    "def halt_error: halt_error(5); ",
    "def walk(f): __shallow | .. |= f; ",
    r#"def @csv: if type != "array" then error("\(type) (\(tojson)) cannot be csv-formatted, only an array can be") else map(if type == "string" then "\"" + (split("\"") | join("\"\"")) + "\"" elif type == "null" then "" elif type == "boolean" or type == "number" then tojson else error("\(type) (\(tojson)) is not valid in a csv row") end) | join(",") end; "#,
    r#"def @tsv: if type != "array" then error("\(type) (\(tojson)) cannot be tsv-formatted, only an array can be") else map(if type == "string" then split("\\") | join("\\\\") | split("\t") | join("\\t") | split("\n") | join("\\n") | split("\r") | join("\\r") | split("\u0000") | join("\\0") elif type == "null" then "" elif type == "boolean" or type == "number" then tojson else error("\(type) (\(tojson)) is not valid in a tsv row") end) | join("\t") end; "#,
);

/// A compiled program and the values of its global variables.
pub struct Program {
    filter: jaq_core::Filter<data::JustLut<Val>>,
    /// Made once: a run's context costs a clone of its head, not a list.
    vars: Vars<Val>,
    /// The program run without the interpreter, when it is one of the
    /// programs a plan runs.
    plan: Option<Plan>,
    /// The plan's outputs, held until it has run to the end.
    held: Vec<Val>,
}

/// One output of a program run on one value.
pub enum Out {
    Value(Val),
    /// A runtime error, as jq says it.
    Error(String),
    /// `halt`, `halt_error`: the program's output ends here (its exit
    /// code is not the exit status: the verdict is).
    Halt,
}

impl Program {
    /// Compile `code`, with `$NAME` bound to each `--arg NAME VALUE`; the
    /// error is the usage message (64).
    pub fn compile(code: &str, args: &[(String, String)]) -> Result<Program, String> {
        let given = code;
        let located = located(code);
        let code = &*guarded(&located);
        refuse_recursion(code)?;
        let full = format!("{PRELUDE}{code}");
        let defs = jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs());
        // `env` is the prelude's; the rest as jaq has them.
        let funs = jaq_core::funs()
            .chain(jaq_std::funs().filter(|f| f.0 != "env"))
            .chain(jaq_json::funs())
            .chain(ticking());
        let loader = Loader::new(defs);
        let arena = Arena::default();
        let modules = loader
            .load(
                &arena,
                File {
                    code: full.as_str(),
                    path: (),
                },
            )
            .map_err(|errs| not_loaded(given, code, &full, &errs))?;
        let names: Vec<String> = ["$ENV".to_string()]
            .into_iter()
            .chain(args.iter().map(|(n, _)| format!("${n}")))
            .collect();
        let filter = jaq_core::Compiler::default()
            .with_funs(funs)
            .with_global_vars(names.iter().map(String::as_str))
            .compile(modules)
            .map_err(|errs| not_compiled(&errs))?;
        let values: Vec<Val> = std::iter::once(Val::obj(Default::default()))
            .chain(args.iter().map(|(_, v)| Val::from(v.clone())))
            .collect();
        // A name given twice is jaq's to resolve, not the plan's.
        let once: Vec<(String, Val)> = names
            .iter()
            .zip(&values)
            .filter(|(n, _)| names.iter().filter(|m| m == n).count() == 1)
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect();
        Ok(Program {
            filter,
            vars: Vars::new(values),
            // What the user wrote: a plan has no loop to stop.
            plan: Plan::of(&located, &once),
            held: vec![],
        })
    }

    /// The top-level keys the program reads of an event, when they are all
    /// it needs of it (see [`Plan::keys`]).
    pub fn keys(&self) -> Option<Vec<Val>> {
        self.plan.as_ref()?.keys()
    }

    /// Run the program on `input`: its outputs, up to the first error or
    /// halt, which ends them.
    pub fn run(&mut self, input: Val, mut each: impl FnMut(Out) -> bool) {
        if let Some(plan) = &self.plan {
            let held = &mut self.held;
            held.clear();
            // Held to be given back whole if the plan gives up: so only a
            // few (a program of many outputs per event streams through
            // the interpreter instead, in bounded memory).
            let mut hold = |v| {
                held.push(v);
                if held.len() > HELD {
                    Err(GiveUp)
                } else {
                    Ok(())
                }
            };
            if plan.run(&input, &mut hold).is_ok() {
                for v in held.drain(..) {
                    if !each(Out::Value(v)) {
                        return;
                    }
                }
                return;
            }
        }
        let ctx = Ctx::<data::JustLut<Val>>::new(&self.filter.lut, self.vars.clone());
        for r in self.filter.id.run((ctx, input)) {
            let out = match r {
                Ok(v) => Out::Value(v),
                Err(exn) => match exn.get_err() {
                    // `error("boom")` says `boom`, as jq does, not `"boom"`.
                    Ok(e) => {
                        let said = bounded(&e);
                        Out::Error(serde_json::from_str::<String>(&said).unwrap_or(said))
                    }
                    Err(_) => Out::Halt,
                },
            };
            // An error ends the event's outputs, as in jq and jaq: what
            // gives one error may give it forever (`"x" | fromjson`).
            let ends = matches!(out, Out::Halt | Out::Error(_));
            if !each(out) || ends {
                return;
            }
        }
    }
}

thread_local! {
    /// What `input_filename` gives: the FILE the event is read from, null
    /// for stdin, as in jq.
    static INPUT_FILENAME: std::cell::RefCell<Val> = const { std::cell::RefCell::new(Val::Null) };
}

/// The input the next events come from (`None`: stdin).
pub fn set_input_filename(name: Option<&str>) {
    INPUT_FILENAME.with(|f| *f.borrow_mut() = name.map_or(Val::Null, |n| Val::from(n.to_string())));
}

type Fun = jaq_core::native::Fun<data::JustLut<Val>>;

/// `__tick`, the identity (in paths and updates too) until a signal has
/// come, then an error; and `__range`, jaq-core's own `range/3` under the
/// name the prelude's `range` calls it by.
fn ticking() -> impl Iterator<Item = Fun> {
    use jaq_core::box_iter::box_once;
    use jaq_core::{Error, Exn, Native};
    /// `v`, or the stop once a signal has come.
    fn ticked<'a, T>(v: T) -> Result<T, Exn<'a, Val>> {
        match crate::signal::requested() {
            false => Ok(v),
            true => Err(Exn::from(Error::str("stopped: a signal came"))),
        }
    }
    let tick = Native::new(|cv| box_once(ticked(cv.1)))
        .with_paths(|cvp| box_once(ticked(cvp.1)))
        .with_update(|cv, f| match ticked(cv.1) {
            Ok(v) => f(v),
            Err(stop) => box_once(Err(stop)),
        });
    let range = jaq_core::funs::<data::JustLut<Val>>()
        .filter(|(name, args, _)| *name == "range" && args.len() == 3)
        .map(|(_, args, native)| ("__range", args, native));
    let filename = Native::new(|_| box_once(Ok(INPUT_FILENAME.with(|f| f.borrow().clone()))));
    /// `v`, or the error past the depth an event may have.
    fn within_depth<'a>(v: Val) -> Result<Val, Exn<'a, Val>> {
        match super::value::deeper_than(&v, super::value::MAX_DEPTH) {
            false => Ok(v),
            true => Err(Exn::from(Error::str(format!(
                "the value nests deeper than {} levels: not printed or walked",
                super::value::MAX_DEPTH
            )))),
        }
    }
    // Past this depth `..` is the library's `recurse`: jaq's own costs one
    // iterator per level for each value it yields.
    const SHALLOW: usize = 64;
    let deep = Native::new(|cv| {
        box_once(match super::value::deeper_than(&cv.1, SHALLOW) {
            false => Ok(Val::from(false)),
            true => within_depth(cv.1).map(|_| Val::from(true)),
        })
    });
    let shallow = Native::new(|cv| box_once(within_depth(cv.1)));
    // The natives the prelude bounds, under the names it calls them by.
    const BOUNDED: [(&str, &str); 5] = [
        ("tojson", "__tojson"),
        ("tobytes", "__tobytes"),
        ("mktime", "__mktime"),
        ("strftime", "__strftime"),
        ("strflocaltime", "__strflocaltime"),
    ];
    let renamed = |(name, args, native): Fun| {
        let (_, to) = BOUNDED.iter().find(|(from, _)| *from == name)?;
        Some((*to, args, native))
    };
    let bounded = jaq_json::funs::<data::JustLut<Val>>()
        .chain(jaq_std::funs())
        .filter_map(renamed);
    [
        ("__tick", jaq_core::native::v(0), tick),
        ("input_filename", jaq_core::native::v(0), filename),
        ("__shallow", jaq_core::native::v(0), shallow),
        ("__deep", jaq_core::native::v(0), deep),
    ]
    .into_iter()
    .chain(range)
    .chain(bounded)
}

/// At most this much of a runtime error's text is kept: jaq quotes the
/// values an error is about whole, at any depth, and formats them by
/// recursion (`reduce range(1e6) as $x (null; [.]) | error` would overflow
/// the stack). Each level writes a byte before it descends, so a writer
/// that refuses more stops the recursion as well (docs/contract.md §3.4).
const ERROR_BYTES: usize = 8 * 1024;

/// `e` as text, cut at [`ERROR_BYTES`] (then ending in `...`).
fn bounded(e: &impl std::fmt::Display) -> String {
    struct Bounded(String);
    impl std::fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let room = ERROR_BYTES - self.0.len();
            if s.len() <= room {
                self.0.push_str(s);
                return Ok(());
            }
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.0.push_str(&s[..cut]);
            Err(std::fmt::Error)
        }
    }
    let mut text = Bounded(String::new());
    if std::fmt::write(&mut text, format_args!("{e}")).is_err() {
        text.0.push_str("...");
    }
    text.0
}

/// A load error, where it is in the program.
/// Why the program does not load, said where the program the user wrote
/// (`given`) is wrong, not the one with `$__loc__` replaced (`code`,
/// `full` with the prelude): that is loaded too, when the two differ,
/// and its errors said if it fails as well.
fn not_loaded(given: &str, code: &str, full: &str, errs: &load::Errors<&str, ()>) -> String {
    if given == code {
        return load_error(full, errs);
    }
    let own = format!("{PRELUDE}{given}");
    let arena = Arena::default();
    let file = File {
        code: own.as_str(),
        path: (),
    };
    match Loader::new(jaq_core::defs()).load(&arena, file) {
        Err(e) => load_error(&own, &e),
        Ok(_) => load_error(full, errs),
    }
}

/// Why the program does not compile: the names it uses that nothing
/// defines.
fn not_compiled(errs: &jaq_core::compile::Errors<&str, ()>) -> String {
    let undefined: Vec<String> = errs
        .iter()
        .flat_map(|(_, es)| {
            es.iter().map(|(name, what)| match what {
                jaq_core::compile::Undefined::Filter(arity) => format!("{name}/{arity}"),
                other => format!("{} {name}", other.as_str()),
            })
        })
        .collect();
    format!(
        "the program names what is not defined: {}",
        undefined.join(", ")
    )
}

fn load_error(full: &str, errs: &load::Errors<&str, ()>) -> String {
    let at = |part: &str| {
        let span = load::span(full, part);
        span.start.saturating_sub(PRELUDE.len()) + 1
    };
    let said: Vec<String> = errs
        .iter()
        .flat_map(|(_, e)| match e {
            load::Error::Io(es) => es.iter().map(|(p, m)| format!("{p}: {m}")).collect(),
            load::Error::Lex(es) => es
                .iter()
                .map(|(want, part)| format!("expected {} at byte {}", want.as_str(), at(part)))
                .collect(),
            load::Error::Parse(es) => es
                .iter()
                .map(|(want, part)| format!("expected {} at byte {}", want.as_str(), at(part)))
                .collect::<Vec<_>>(),
        })
        .collect();
    format!("the program does not compile: {}", said.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jaq_json::Rc;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    fn outputs(code: &str, input: &str) -> Vec<String> {
        let mut p = Program::compile(code, &[]).unwrap();
        let v = jaq_json::read::parse_single(input.as_bytes()).unwrap();
        let mut got = vec![];
        p.run(v, |o| {
            got.push(match o {
                Out::Value(v) => v.to_string(),
                Out::Error(e) => format!("error: {e}"),
                Out::Halt => "halt".to_string(),
            });
            true
        });
        got
    }

    #[test]
    fn a_program_runs_on_a_value() {
        assert_eq!(outputs(".a, .b", r#"{"a":1,"b":"x"}"#), ["1", r#""x""#]);
        assert_eq!(outputs("env, $ENV", "{}"), ["{}", "{}"]);
        assert_eq!(
            outputs(r#"1, error("boom"), 2"#, "{}"),
            ["1", "error: boom"]
        );
        assert_eq!(outputs("1, halt_error, 2", r#""bye""#), ["1", "halt"]);
    }

    #[test]
    fn a_program_that_does_not_compile_or_recurses_is_refused() {
        for bad in [
            "select(",
            "nosuchfn",
            "def f: 1+f; f",
            "def f: g; def g: f; f",
        ] {
            assert!(Program::compile(bad, &[]).is_err(), "{bad}");
        }
        let err = Program::compile("def f: 1+f; f", &[]).err().unwrap();
        assert!(err.contains("def f/0 calls itself"), "{err}");
        // A definition that shadows its own name calls the inner one,
        // as jq scopes it: no recursion.
        assert_eq!(outputs("def g: def g: 3; g; g", "null"), ["3"]);
        for refused in ["input", "[inputs]", "first(inputs)"] {
            let err = Program::compile(refused, &[]).err().unwrap();
            assert!(err.contains("one event at a time"), "{err}");
        }
        assert_eq!(outputs("def input: 1; input", "null"), ["1"]);
        // Another arity is another filter.
        assert!(Program::compile("def f(g): g; def f: f(1); f", &[]).is_ok());
        assert!(
            Program::compile(
                "def inc: .+1; walk(if type == \"number\" then inc else . end)",
                &[]
            )
            .is_ok()
        );
    }

    #[test]
    fn csv_and_tsv_are_jq_s() {
        assert_eq!(
            outputs("@csv", r#"[1,"a\"b",null,true,"x,y"]"#),
            [r#""1,\"a\"\"b\",,true,\"x,y\"""#]
        );
        assert_eq!(
            outputs("@tsv", r#"[1,"a\tb\\c\nd",null,false]"#),
            [r#""1\ta\\tb\\\\c\\nd\t\tfalse""#]
        );
        // NUL as `\0`, as jq 1.7 and jaq write it.
        assert_eq!(outputs("@tsv", r#"["a\u0000b"]"#), [r#""a\\0b""#]);
        assert_eq!(
            outputs(r#"@csv "row: \(.)""#, r#"["a"]"#),
            [r#""row: \"a\"""#]
        );
        assert!(outputs("@csv", r#"[[1]]"#)[0].starts_with("error: "));
        assert!(outputs("@tsv", "{}")[0].starts_with("error: "));
    }

    #[test]
    fn args_are_variables() {
        let mut p = Program::compile("$name", &[("name".into(), "v".into())]).unwrap();
        let mut got = vec![];
        p.run(Val::Null, |o| {
            if let Out::Value(v) = o {
                got.push(v.to_string());
            }
            true
        });
        assert_eq!(got, [r#""v""#]);
    }

    /// What jaq's interpreter gives on `input`, as text.
    fn interpreted(code: &str, input: &Val) -> Vec<String> {
        let mut p = Program::compile(code, &[]).unwrap();
        // Every event through jaq's interpreter, the plan left out.
        p.plan = None;
        let mut got = vec![];
        p.run(input.clone(), |o| {
            got.push(match o {
                Out::Value(v) => v.to_string(),
                Out::Error(e) => format!("error: {e}"),
                Out::Halt => "halt".to_string(),
            });
            true
        });
        got
    }

    /// What the plan gives on the event made of only the keys it reads,
    /// the event itself written as the whole one; `None` when it gives the
    /// event back.
    fn planned(plan: &Plan, whole: &Val) -> Option<Vec<String>> {
        let input = match (plan.keys(), whole) {
            (Some(keys), Val::Obj(m)) => Val::obj(
                m.iter()
                    .filter(|(k, _)| keys.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            _ => whole.clone(),
        };
        let mut got = vec![];
        let ran = plan.run(&input, &mut |v| {
            let is_input = matches!((&v, &input), (Val::Obj(a), Val::Obj(b)) if Rc::ptr_eq(a, b));
            got.push(if is_input {
                whole.to_string()
            } else {
                v.to_string()
            });
            Ok(())
        });
        ran.ok().map(|()| got)
    }

    fn program() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec![
            ".",
            ".a",
            ".b",
            ".a.b",
            ".c.a",
            ".[\"a\"]",
            "1",
            "2.0",
            "-1",
            "\"x\"",
            "\"\\u00e9\"",
            "true",
            "false",
            "null",
            "empty",
            "not",
            "\"a\"",
        ])
        .prop_map(str::to_string);
        // The string builtins a plan runs (on a string; any other input
        // is jaq's).
        let builtin = prop::sample::select(vec![
            "ascii_downcase",
            "ascii_upcase",
            "length",
            "tostring",
            "test(\"a\")",
            "test(\"^A.\"; \"i\")",
            "test(\"\\\\s\")",
            "split(\"a\")",
            "split(\"\")",
        ]);
        leaf.prop_recursive(4, 24, 2, move |inner| {
            let two = (inner.clone(), inner.clone());
            prop_oneof![
                inner.clone().prop_map(|a| format!("select({a})")),
                (inner.clone(), builtin.clone()).prop_map(|(a, f)| format!("({a} | {f})")),
                (
                    prop::sample::select(vec![".a", ".b", ".c.a"]),
                    builtin.clone()
                )
                    .prop_map(|(a, f)| format!("({a} | {f})")),
                (
                    two,
                    prop::sample::select(vec![
                        "|", ",", "==", "!=", "<", "<=", ">", ">=", "and", "or",
                    ])
                )
                    .prop_map(|((a, b), op)| format!("({a} {op} {b})")),
            ]
        })
    }

    fn event() -> impl Strategy<Value = String> {
        let scalar = prop::sample::select(vec![
            "null",
            "true",
            "false",
            "0",
            "1",
            "1.0",
            "-1",
            "12345678901234567890",
            "\"x\"",
            "\"a\"",
            "\"\\u00e9\"",
            "\"\"",
            "\"Aa b\"",
            "\"\\u00c9a\\nA\"",
            "\"aa\"",
            "\"Éé A\"",
            "[]",
            "{}",
            "[1,\"x\"]",
        ])
        .prop_map(str::to_string);
        let value = scalar.prop_recursive(2, 8, 3, |inner| {
            prop::collection::vec((prop::sample::select(vec!["a", "b", "c"]), inner), 0..3)
                .prop_map(|kvs| {
                    let m: Vec<String> = kvs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", m.join(","))
                })
        });
        prop::collection::vec(
            (prop::sample::select(vec!["a", "b", "c", "type"]), value),
            0..4,
        )
        .prop_map(|kvs| {
            let m: Vec<String> = kvs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", m.join(","))
        })
    }

    /// Every program a plan takes gives, on every event it does not give
    /// back, what jaq's interpreter gives on the whole event
    /// (`AOITAP_PROPTEST_CASES`, default 256).
    #[test]
    fn a_plan_gives_what_jaq_gives() {
        let cases = crate::proptest_cases();
        let mut runner = TestRunner::new(Config::with_cases(cases));
        let (decided, projected) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
        runner
            .run(
                &(program(), prop::collection::vec(event(), 8)),
                |(code, events)| {
                    let plan = Plan::of(&code, &[]).expect("every generated program is a plan");
                    projected.set(projected.get() + usize::from(plan.keys().is_some()));
                    for ev in &events {
                        let whole = jaq_json::read::parse_single(ev.as_bytes()).unwrap();
                        if let Some(got) = planned(&plan, &whole) {
                            decided.set(decided.get() + 1);
                            prop_assert_eq!(got, interpreted(&code, &whole), "{} on {}", code, ev);
                        }
                    }
                    Ok(())
                },
            )
            .unwrap();
        // The cases exercise the plan, not only its giving back (a string
        // builtin gives back every input but a string: one event in five
        // or so is decided by the plan).
        assert!(
            decided.get() * 8 > cases as usize * 8,
            "{decided:?} of {cases}x8"
        );
        assert!(
            projected.get() * 4 > cases as usize,
            "{projected:?} of {cases}"
        );
    }
}
