//! The programs most filters are (`select(.type=="hit") | .id`,
//! `select(.ok == false)`, `.aoi.run`), run without jaq's interpreter, on
//! jaq's own values with jaq's own comparisons (docs/contract.md §16).
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
            Plan::Lit(_) | Plan::Cmp(..) | Plan::Logic(..) | Plan::Not | Plan::Empty => false,
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
        }
    }
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
            ".a | length",
            "\"\\(.a)\"",
            "$__loc__",
            ". as $x | $x",
        ] {
            assert!(Plan::of(code, &[]).is_none(), "{code}");
        }
    }
}
