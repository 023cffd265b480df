//! The programs most filters are (`select(.type=="hit") | .id`,
//! `select(.ok == false)`, `.aoi.run`), run without jaq's interpreter, on
//! jaq's own values with jaq's own comparisons (docs/contract.md §1.5).
//!
//! Why: jaq spends about 300 ns an event on one `.id` (a boxed iterator
//! and a path walk each), three times what building the event costs; on
//! 64 MiB of the reference stream that was the difference between 1.9x
//! and 2x the jaq binary (benches/filter.sh). Why this is one truth, not a
//! second jq: a plan is made only of paths of literal keys, literals,
//! `select`, comparisons, `and`, `or`, `not`, `empty`, `|` and `,`, it
//! indexes with jaq's own `index`, compares with jaq's own `Cmp::run`, and
//! anything it does not take for certain (an index jaq would refuse, a
//! comparison of many values) gives the event back to jaq, which then
//! runs the whole program on it. A property test beside `Program` holds
//! the two to the same outputs.
//!
//! A plan also says which of the event's top-level keys it reads: when
//! the event is needed only through them, only they are made values.
//!
//! The string builtins most filters end in (`ascii_downcase`,
//! `ascii_upcase`, `length`, `tostring`, `test("RE")`, `split("SEP")`)
//! are planned on a string input, made as jaq-std makes them (its own
//! division splits; `test`'s regex is built with the same crate and flags
//! as jaq-std builds it, but once, not once an event); any other input is
//! given back to jaq (docs/contract.md §8.2).

use jaq_core::ValT;
use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Term};
use jaq_core::ops::Cmp;
use jaq_core::path::{Opt, Part};
use jaq_json::Val;

/// A program the plan runs, or `None` from [`Plan::of`].
#[derive(Debug)]
pub enum Plan {
    /// `.`
    Id,
    /// `.a.b`: object keys, one after another.
    Keys(Vec<Val>),
    /// A number, a string without interpolation, `true`, `false`, `null`,
    /// `$NAME` of `--arg` or `$ENV`.
    Lit(Val),
    Pipe(Box<Plan>, Box<Plan>),
    Comma(Box<Plan>, Box<Plan>),
    Select(Box<Plan>),
    Cmp(Box<Plan>, Cmp, Box<Plan>),
    /// `and` (stops on `false`), `or` (stops on `true`).
    Logic(Box<Plan>, bool, Box<Plan>),
    Not,
    Empty,
    /// A builtin on a string.
    Str(StrFn),
}

/// A string builtin a plan runs (on a string input only).
#[derive(Debug)]
pub enum StrFn {
    AsciiDowncase,
    AsciiUpcase,
    Length,
    ToString,
    Test(regex_bites::bytes::Regex),
    Split(Val),
}

/// The plan gave the event back: jaq runs the program on it.
pub struct GiveUp;

impl Plan {
    /// The plan of `code`, when it is one; `vars` are the global
    /// variables' names (with `$`) and values.
    pub fn of(code: &str, vars: &[(String, Val)]) -> Option<Plan> {
        let term = jaq_core::load::parse(code, |p| p.term())?;
        plan(&term, vars)
    }

    /// The top-level keys the plan reads of an event, when they are all it
    /// needs of it; `None` when it needs the whole event (`. == {}`).
    pub fn keys(&self) -> Option<Vec<Val>> {
        let mut keys = vec![];
        self.reads(true, &mut keys).then_some(keys)
    }

    /// Whether the plan, given `input` (the event itself when `root`),
    /// needs of it only what `keys` gets; and it gets the keys it reads.
    fn reads(&self, root: bool, keys: &mut Vec<Val>) -> bool {
        match self {
            Plan::Keys(k) => {
                if root && let Some(first) = k.first() {
                    keys.push(first.clone());
                }
                true
            }
            Plan::Id | Plan::Lit(_) | Plan::Not | Plan::Empty => true,
            // It reads its input whole: never the event's keys alone.
            Plan::Str(_) => !root,
            Plan::Pipe(l, r) => l.reads(root, keys) && r.reads(root && l.gives_input(), keys),
            Plan::Comma(l, r) | Plan::Logic(l, _, r) => l.reads(root, keys) && r.reads(root, keys),
            // Truth: an object is true however few of its keys it has.
            Plan::Select(c) => c.reads(root, keys),
            // A comparison reads its sides whole.
            Plan::Cmp(l, _, r) => {
                !(root && (l.gives_input() || r.gives_input()))
                    && l.reads(root, keys)
                    && r.reads(root, keys)
            }
        }
    }

    /// Whether an output may be the input itself.
    fn gives_input(&self) -> bool {
        match self {
            Plan::Id | Plan::Select(_) => true,
            Plan::Keys(k) => k.is_empty(),
            Plan::Pipe(l, r) => l.gives_input() && r.gives_input(),
            Plan::Comma(l, r) => l.gives_input() || r.gives_input(),
            Plan::Lit(_)
            | Plan::Cmp(..)
            | Plan::Logic(..)
            | Plan::Not
            | Plan::Empty
            | Plan::Str(_) => false,
        }
    }

    /// Run the plan on `input`: each output to `out`, in jaq's order.
    pub fn run(
        &self,
        input: &Val,
        out: &mut dyn FnMut(Val) -> Result<(), GiveUp>,
    ) -> Result<(), GiveUp> {
        match self {
            Plan::Id => out(input.clone()),
            Plan::Keys(keys) => {
                let mut v = input.clone();
                for k in keys {
                    // jaq's own index: an object's member or null, null
                    // for null, an error jaq says better otherwise.
                    v = v.index(k).map_err(|_| GiveUp)?;
                }
                out(v)
            }
            Plan::Lit(v) => out(v.clone()),
            Plan::Pipe(l, r) => l.run(input, &mut |v| r.run(&v, out)),
            Plan::Comma(l, r) => {
                l.run(input, out)?;
                r.run(input, out)
            }
            Plan::Select(c) => c.run(input, &mut |v| {
                if v.as_bool() {
                    out(input.clone())
                } else {
                    Ok(())
                }
            }),
            Plan::Cmp(l, op, r) => {
                let (l, r) = (one(l, input)?, one(r, input)?);
                out(Val::from(op.run(&l, &r)))
            }
            // As jaq's `Logic`: each left output decides, or each right
            // one does.
            Plan::Logic(l, stop, r) => l.run(input, &mut |lv| {
                if lv.as_bool() == *stop {
                    out(Val::from(*stop))
                } else {
                    r.run(input, &mut |rv| out(Val::from(rv.as_bool())))
                }
            }),
            Plan::Not => out(Val::from(!input.as_bool())),
            Plan::Empty => Ok(()),
            Plan::Str(f) => out(f.run(input)?),
        }
    }
}

impl StrFn {
    /// What jaq-std gives of `input`, a string; any other input is jaq's
    /// (an error, or a value of another kind: `length` of a number).
    fn run(&self, input: &Val) -> Result<Val, GiveUp> {
        let Val::TStr(bytes) = input else {
            return Err(GiveUp);
        };
        Ok(match self {
            // jaq-std: `map_utf8_str(to_ascii_lowercase)`.
            StrFn::AsciiDowncase => Val::utf8_str(bytes.to_ascii_lowercase()),
            StrFn::AsciiUpcase => Val::utf8_str(bytes.to_ascii_uppercase()),
            // jaq-json: the characters of the string (an event's strings
            // are UTF-8; what is not is jaq's to count).
            StrFn::Length => {
                let text = std::str::from_utf8(bytes).map_err(|_| GiveUp)?;
                Val::from(text.chars().count())
            }
            // The prelude's `"\(.)"`: a string is itself.
            StrFn::ToString => input.clone(),
            // jaq-std: `matches(re; "") | any`, true when there is one.
            StrFn::Test(re) => Val::Bool(re.is_match(bytes)),
            // jaq-std: `. / $sep`, jaq-json's own division.
            StrFn::Split(sep) => (input.clone() / sep.clone()).map_err(|_| GiveUp)?,
        })
    }
}

/// `test`'s regex, built as jaq-std builds it (`regex::Flags::regex`):
/// `None` for flags a plan leaves to jaq (`n`, which drops empty matches,
/// or one jaq refuses) or a pattern that does not compile (jaq says why,
/// event by event).
fn regex(re: &str, flags: &str) -> Option<regex_bites::bytes::Regex> {
    let mut b = regex_bites::bytes::RegexBuilder::new(re);
    let (mut i, mut m, mut s, mut l, mut x) = (false, false, false, false, false);
    for f in flags.chars() {
        match f {
            // Global: every match, and one is enough to `test`.
            'g' => {}
            'i' => i = true,
            'm' => m = true,
            's' => s = true,
            'l' => l = true,
            'x' => x = true,
            'p' => (m, s) = (true, true),
            _ => return None,
        }
    }
    b.case_insensitive(i)
        .multi_line(m)
        .dot_matches_new_line(s)
        .swap_greed(l)
        .ignore_whitespace(x)
        .build()
        .ok()
}

/// The one output of `p`: a comparison of many values is jaq's to make
/// (the order of its pairs is its own).
fn one(p: &Plan, input: &Val) -> Result<Val, GiveUp> {
    let mut got = None;
    let mut many = false;
    p.run(input, &mut |v| {
        many |= got.replace(v).is_some();
        if many { Err(GiveUp) } else { Ok(()) }
    })?;
    match (got, many) {
        (Some(v), false) => Ok(v),
        _ => Err(GiveUp),
    }
}

fn plan(t: &Term<&str>, vars: &[(String, Val)]) -> Option<Plan> {
    let sub = |t: &Term<&str>| plan(t, vars).map(Box::new);
    Some(match t {
        Term::Id => Plan::Id,
        Term::Num(n) => Plan::Lit(Val::from_num(n).ok()?),
        // `-1`: jaq's own negation, made once.
        Term::Neg(n) if matches!(**n, Term::Num(_)) => match plan(n, vars)? {
            Plan::Lit(v) => Plan::Lit((-v).ok()?),
            _ => return None,
        },
        Term::Str(None, parts) => Plan::Lit(Val::from(literal(parts)?)),
        Term::Var(name) => Plan::Lit(vars.iter().find(|(n, _)| n == name)?.1.clone()),
        Term::Call("true", args) if args.is_empty() => Plan::Lit(Val::Bool(true)),
        Term::Call("false", args) if args.is_empty() => Plan::Lit(Val::Bool(false)),
        Term::Call("null", args) if args.is_empty() => Plan::Lit(Val::Null),
        Term::Call("not", args) if args.is_empty() => Plan::Not,
        Term::Call("empty", args) if args.is_empty() => Plan::Empty,
        Term::Call("select", args) if args.len() == 1 => Plan::Select(sub(&args[0])?),
        Term::Call(name, args) if args.is_empty() => Plan::Str(match *name {
            "ascii_downcase" => StrFn::AsciiDowncase,
            "ascii_upcase" => StrFn::AsciiUpcase,
            "length" => StrFn::Length,
            "tostring" => StrFn::ToString,
            _ => return None,
        }),
        Term::Call(name @ ("test" | "split"), args) if !args.is_empty() && args.len() <= 2 => {
            // A literal string or a bound one, as the plan of it gives it.
            let text = |t: &Term<&str>| match plan(t, vars)? {
                Plan::Lit(Val::TStr(b)) => String::from_utf8(b.to_vec()).ok(),
                _ => None,
            };
            let first = text(&args[0])?;
            Plan::Str(match (*name, args.get(1)) {
                ("test", flags) => {
                    let flags = flags.map_or(Some(String::new()), text)?;
                    StrFn::Test(regex(&first, &flags)?)
                }
                // `split/2` splits by a regex: jaq's.
                ("split", None) => StrFn::Split(Val::from(first)),
                _ => return None,
            })
        }
        Term::Path(of, path) => {
            let mut keys = vec![];
            for (part, opt) in &path.0 {
                // `.a?` is jaq's: it turns what a plan gives back into
                // nothing, which the plan does not decide.
                let (Part::Index(Term::Str(None, parts)), Opt::Essential) = (part, opt) else {
                    return None;
                };
                keys.push(Val::from(literal(parts)?));
            }
            match **of {
                Term::Id => Plan::Keys(keys),
                _ => Plan::Pipe(sub(of)?, Box::new(Plan::Keys(keys))),
            }
        }
        Term::BinOp(l, op, r) => match op {
            BinaryOp::Pipe(None) => Plan::Pipe(sub(l)?, sub(r)?),
            BinaryOp::Comma => Plan::Comma(sub(l)?, sub(r)?),
            BinaryOp::And => Plan::Logic(sub(l)?, false, sub(r)?),
            BinaryOp::Or => Plan::Logic(sub(l)?, true, sub(r)?),
            BinaryOp::Cmp(op) => Plan::Cmp(sub(l)?, *op, sub(r)?),
            _ => return None,
        },
        _ => return None,
    })
}

/// A string literal's text; `None` for interpolation.
fn literal(parts: &[StrPart<&str, Term<&str>>]) -> Option<String> {
    let mut s = String::new();
    for p in parts {
        match p {
            StrPart::Str(text) => s.push_str(text),
            StrPart::Char(c) => s.push(*c),
            StrPart::Term(_) => return None,
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_plan_takes_and_what_it_reads() {
        let keys = |code: &str| {
            let plan = Plan::of(code, &[]).unwrap();
            plan.keys()
                .map(|k| k.iter().map(|k| k.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            keys(r#"select(.type=="hit") | .id"#).unwrap(),
            [r#""type""#, r#""id""#]
        );
        assert_eq!(keys(".aoi.run").unwrap(), [r#""aoi""#]);
        assert_eq!(keys(".").unwrap(), Vec::<String>::new());
        // A comparison of the event itself needs all of it.
        assert_eq!(keys(". == \"x\""), None);
        assert_eq!(keys("select(.a) | . != 1"), None);
        // What is not a plan is jaq's.
        for code in [
            ".a?",
            ".[]",
            "def f: .; f",
            ".a | splits(\"x\")",
            "test(\"(\")",
            "test(\"a\"; \"n\")",
            "\"\\(.a)\"",
            "$__loc__",
            ". as $x | $x",
        ] {
            assert!(Plan::of(code, &[]).is_none(), "{code}");
        }
    }
}
