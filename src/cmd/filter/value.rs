//! An event as the program sees it: the line's own parse (one parse, DESIGN
//! §8), made a jaq value. Strings are decoded as verify decodes them;
//! numbers keep their spelling's value (jaq reads `12345678901234567890`
//! as the big integer it is).

use std::rc::Rc;

use jaq_json::Val;

use crate::json::{Event, Kind, Value};

/// The deepest a value is nested for the program: deeper, and the event
/// is not filtered (jaq's own walk of it would recurse as deep).
pub const MAX_DEPTH: usize = 512;

/// The event as a jaq value; `None` when it nests deeper than
/// [`MAX_DEPTH`]. Its top level comes from the walk's own index.
pub fn event_val(ev: &Event<'_>) -> Option<Val> {
    let mut map = jaq_json::Map::default();
    for (k, c) in ev.members() {
        // A repeated key: the last one wins, as in jq.
        map.insert(Val::utf8_str(k.into_owned()), to_val_at(&c, 1)?);
    }
    Some(Val::obj(map))
}

fn to_val_at(v: &Value<'_>, depth: usize) -> Option<Val> {
    Some(match v.kind() {
        Kind::Null => Val::Null,
        Kind::Bool => Val::Bool(v.as_bool().unwrap_or(false)),
        Kind::Number => match jaq_json::read::parse_single_num(v.raw()) {
            Some(n) => Val::Num(n),
            None => Val::Null,
        },
        // The line is valid UTF-8 (verify's json.invalid-utf8 says when
        // not), so the decoded bytes are the string's text as they are.
        Kind::String => Val::utf8_str(v.decoded().map(|b| b.into_owned()).unwrap_or_default()),
        _ if depth >= MAX_DEPTH => return None,
        Kind::Array => {
            let items: Option<Vec<Val>> = v
                .children()
                .map(|(_, c)| to_val_at(&c, depth + 1))
                .collect();
            Val::Arr(Rc::new(items?))
        }
        Kind::Object => {
            let mut map = jaq_json::Map::default();
            for (k, c) in v.children() {
                map.insert(Val::utf8_str(k.into_owned()), to_val_at(&c, depth + 1)?);
            }
            Val::obj(map)
        }
    })
}
