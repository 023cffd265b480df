//! `verify --schema FILE`: every event held to the producer's own JSON
//! Schema (docs/contract.md §3.5; spec §10, §18.2 check 4).
//!
//! The schema is compiled once by the `jsonschema` crate (2020-12, 2019-09,
//! draft-07, -06, -04, chosen by `$schema`), built without its HTTP and file
//! resolvers: a `$ref` outside the document cannot be fetched, so it fails
//! the compile, and that is a usage error. Nothing is ever fetched.
//!
//! The validator reads a `serde_json::Value`. It is built here, only with
//! `--schema`, from the line the walker already validated, with the
//! walker's own decoding: numbers past `f64` are held at `±f64::MAX` (a
//! number still, of the right sign, where serde_json's reader would reject
//! the line), a lone surrogate is U+FFFD, and the last of a duplicated key
//! wins, as in jq and Python. Nesting past `MAX_DEPTH` is not built (the
//! validator and `Value` recurse), and is said so: `event.schema-unchecked`.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ReferencingError, ValidationError, Validator};
use serde_json::{Map, Number, Value};

use crate::input::line_check::LineCheck;
pub use crate::input::line_check::{Invalid, SchemaPlace, Validity};
use crate::json::{Event, unescape};
use crate::text::{QUOTE_BYTES, prefix};

/// The deepest nesting built for the validator: serde_json's own reading
/// limit, far past any event schema's depth.
pub const MAX_DEPTH: usize = 128;

/// The largest schema file read (a schema, not a stream: it is held whole).
const MAX_SCHEMA_BYTES: u64 = 64 << 20;

/// A compiled event schema.
pub struct EventSchema {
    root: Validator,
    /// The whole document, to follow an error's evaluation path to the
    /// definition it went through.
    doc: Value,
    /// For a schema that picks an event's definition by `oneOf`/`anyOf`
    /// (which fails as "matched none" at the root): each event type's own
    /// definition, compiled on first use.
    branches: HashMap<String, Branch>,
    /// The root picks a definition by `oneOf`/`anyOf`.
    composite: bool,
    /// `--secret-name`: values under these keys are never quoted.
    secret_names: Vec<String>,
}

struct Branch {
    pointer: String,
    validator: OnceLock<Option<Validator>>,
}

impl fmt::Debug for EventSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventSchema").finish_non_exhaustive()
    }
}

impl LineCheck for EventSchema {
    fn check(&self, ev: &Event<'_>) -> Validity {
        EventSchema::check(self, ev)
    }
}

impl EventSchema {
    /// Read and compile `--schema FILE`; the error is the usage message.
    pub fn load(path: &Path, secret_names: &[String]) -> Result<EventSchema, String> {
        let name = path.display();
        let text = read_bounded(path).map_err(|e| format!("cannot read --schema {name}: {e}"))?;
        Self::from_bytes(&text, &format!("--schema {name}"), secret_names)
    }

    /// Compile a schema held in memory (`lint` reads the tool's own from
    /// its schema command: nothing is written to disk for it); `name`
    /// begins each error.
    pub fn from_bytes(
        text: &[u8],
        name: &str,
        secret_names: &[String],
    ) -> Result<EventSchema, String> {
        // RFC 8259 §8.1: a parser may ignore a byte order mark; editors
        // write one.
        let body = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
        let doc: Value =
            serde_json::from_slice(body).map_err(|e| format!("{name} is not JSON: {e}"))?;
        // Costed before it is compiled: compiling a hostile schema (a chain
        // of 50,000 refs) takes seconds of its own.
        let steps = expansion(&doc);
        if steps > MAX_EXPANSION {
            return Err(format!(
                "{name}: its $refs expand to more than {MAX_EXPANSION} subschemas \
                 (anyOf over $refs that are anyOfs, level after level?) or nest past \
                 {MAX_REF_DEPTH} levels; a failing event would be tried against each, so aoitap \
                 refuses it rather than stall on one line"
            ));
        }
        let root = compile(&doc).map_err(|e| format!("{name}: {e}"))?;
        let branches = branches(&doc);
        let composite = doc.get("oneOf").or_else(|| doc.get("anyOf")).is_some();
        Ok(EventSchema {
            root,
            doc,
            branches,
            composite,
            secret_names: secret_names.to_vec(),
        })
    }

    /// Validate one event (an object line).
    pub fn check(&self, ev: &Event<'_>) -> Validity {
        let Some(instance) = tree(ev.as_value().raw()) else {
            return Validity::Unchecked(format!(
                "the event nests deeper than {MAX_DEPTH} levels: not validated against the schema"
            ));
        };
        if self.root.is_valid(&instance) {
            return Validity::Valid;
        }
        let ty = instance.get("type").and_then(Value::as_str);
        // A `oneOf`/`anyOf` over definitions says only "matched none": the
        // event's own definition says why (spec §10.4).
        if self.composite
            && let Some(t) = ty
            && let Some(branch) = self.branches.get(t)
            && let Some(v) = branch.validator(&self.doc)
            && !v.is_valid(&instance)
        {
            return self.explain(v, &instance, Some(clip(t)));
        }
        self.explain(&self.root, &instance, None)
    }

    /// The most specific error (the deepest in the event; the first of
    /// equals), with the count of the others.
    /// `branch`: the event type whose definition `v` is, when it is one.
    fn explain(&self, v: &Validator, instance: &Value, branch: Option<String>) -> Validity {
        let depth = |e: &ValidationError<'_>| e.instance_path().as_str().matches('/').count();
        let mut best: Option<ValidationError<'_>> = None;
        let mut others = 0usize;
        let mut gave_up = None;
        for e in v.iter_errors(instance) {
            // The regex engine's limit is not the event's fault: say the
            // pattern was not evaluated rather than call the event invalid.
            if matches!(
                e.kind(),
                ValidationErrorKind::BacktrackLimitExceeded { .. }
                    | ValidationErrorKind::RegexEngineFailure { .. }
            ) {
                gave_up.get_or_insert_with(|| e.schema_path().as_str().to_string());
                continue;
            }
            match &best {
                Some(b) if depth(&e) <= depth(b) => others += 1,
                Some(_) => {
                    others += 1;
                    best = Some(e);
                }
                None => best = Some(e),
            }
        }
        let Some(best) = best else {
            return Validity::Unchecked(match gave_up {
                Some(at) => format!(
                    "the regex engine gave up on the pattern at {} (backtracking limit): not validated",
                    clip(&at)
                ),
                None => "the validator said invalid but gave no error: not validated".into(),
            });
        };
        let instance_path = best.instance_path().as_str().to_string();
        let mut message = String::new();
        let ty = instance.get("type").and_then(Value::as_str);
        if let Some(branch) = branch.or_else(|| self.branch_of(&best, ty)) {
            message.push_str(&branch);
            message.push_str(": ");
        }
        if !instance_path.is_empty() {
            message.push_str(&instance_path);
            message.push_str(": ");
        }
        let secret = secret_path(&instance_path, &self.secret_names);
        message.push_str(&describe(&best, secret));
        let schema_path = match best.schema_path().as_str() {
            "" => "/",
            p => p,
        };
        message.push_str(&format!(" (schema {})", clip(schema_path)));
        if others > 0 {
            let s = if others == 1 { "" } else { "s" };
            message.push_str(&format!("; {others} more error{s} in this event"));
        }
        Validity::Invalid(Invalid {
            message,
            place: SchemaPlace {
                instance_path: clip(&instance_path),
                keyword: best.kind().keyword().to_string(),
                schema_path: clip(schema_path),
            },
        })
    }

    /// Which event type's branch an error is in: the definition the first
    /// `$ref` on its evaluation path names, else the event's type when the
    /// path went through a `then` (an `if`/`then` dispatch).
    fn branch_of(&self, e: &ValidationError<'_>, ty: Option<&str>) -> Option<String> {
        let ty = ty?;
        let path = e.evaluation_path().as_str();
        let through_then = path.split('/').any(|s| s == "then");
        // The first definition on the path is the type's own (a `$defs`
        // keyed by type), or the path went through a `then`: either way
        // the branch is the type's. Anything else names no branch.
        let own = self.branches.get(ty).map(|b| b.pointer.as_str());
        let first = first_ref_target(&self.doc, path);
        let is_own = first
            .is_some_and(|def| own.is_some_and(|p| p.ends_with(&format!("/{}", fragment(&def)))));
        (through_then || is_own).then(|| clip(ty))
    }
}

impl Branch {
    fn validator(&self, doc: &Value) -> Option<&Validator> {
        self.validator
            .get_or_init(|| {
                let mut wrapper = Map::new();
                for key in ["$schema", "$id", "$defs", "definitions"] {
                    if let Some(v) = doc.get(key) {
                        wrapper.insert(key.into(), v.clone());
                    }
                }
                wrapper.insert("$ref".into(), Value::String(self.pointer.clone()));
                compile(&Value::Object(wrapper)).ok()
            })
            .as_ref()
    }
}

/// Compile without ever fetching (the crate is built without resolvers);
/// the error is one bounded line.
/// The most subschemas a schema may expand to, its local `$ref`s followed
/// (see `expansion`). Real schemas stay in the hundreds or thousands.
const MAX_EXPANSION: u64 = 100_000;

/// The deepest a schema may nest, counting each `$ref` followed as a
/// level (a chain of 50,000 refs is no schema anyone writes by hand).
const MAX_REF_DEPTH: usize = 1_000;

/// About how many subschemas a validator may visit for one value of the
/// event: the schema with every `$ref` replaced by what it points to. A
/// schema is a tree, but `$ref` makes it a graph, and a chain of `anyOf`s
/// that each refer twice to the next one doubles per level, so a 1 KB
/// schema can cost minutes and gigabytes per event.
///
/// Each target is counted once and remembered, so this takes time linear
/// in the schema; a `$ref` back into its own expansion (recursion) counts
/// 1, since it recurses only as deep as the event does. Refs are followed
/// as JSON pointers (percent-decoded), `$anchor`/`$dynamicAnchor` names,
/// and `other.json#/...` read against this document. `$defs` count only
/// where referred to, and a `properties` map counts as its costliest
/// member: one instance member meets one of them.
fn expansion(doc: &Value) -> u64 {
    let mut count = Expansion {
        doc,
        anchors: HashMap::new(),
        done: HashMap::new(),
        open: std::collections::HashSet::new(),
        depth: 0,
    };
    count.anchors(doc);
    count.node(doc)
}

/// The walk `expansion` takes: the anchors of the document, each
/// `$ref` target counted once, and the targets being expanded.
struct Expansion<'a> {
    doc: &'a Value,
    anchors: HashMap<&'a str, &'a Value>,
    done: HashMap<String, u64>,
    open: std::collections::HashSet<String>,
    /// Nesting of the walk, refs followed included: past
    /// `MAX_REF_DEPTH` the schema counts as too costly, and the call
    /// stack stays small whatever the schema.
    depth: usize,
}

impl<'a> Expansion<'a> {
    /// Every `$anchor` and `$dynamicAnchor` under `v`, by name.
    fn anchors(&mut self, v: &'a Value) {
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    if let ("$anchor" | "$dynamicAnchor", Value::String(a)) = (k.as_str(), c) {
                        self.anchors.insert(a, v);
                    }
                    self.anchors(c);
                }
            }
            Value::Array(a) => a.iter().for_each(|c| self.anchors(c)),
            _ => {}
        }
    }

    /// The cost of the subschema `v`, one level deeper.
    fn node(&mut self, v: &Value) -> u64 {
        if self.depth >= MAX_REF_DEPTH {
            return MAX_EXPANSION + 1;
        }
        self.depth += 1;
        let n = self.members(v);
        self.depth -= 1;
        n
    }

    /// The cost of `v`: 1, and what its subschemas and refs cost.
    fn members(&mut self, v: &Value) -> u64 {
        let Value::Object(m) = v else {
            // A bare `true`/`false` schema, or a list of schemas.
            return match v {
                Value::Array(a) => a.iter().map(|c| self.node(c)).fold(0, u64::saturating_add),
                _ => 0,
            };
        };
        let mut n: u64 = 1;
        for (k, c) in m {
            n = n.saturating_add(match (k.as_str(), c) {
                ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(r)) => self.target(r),
                // Values and words, not subschemas; `$defs` count where
                // they are referred to.
                (
                    "enum" | "const" | "default" | "examples" | "$defs" | "definitions"
                    | "$comment" | "title" | "description",
                    _,
                ) => 0,
                ("properties" | "patternProperties" | "dependentSchemas", Value::Object(p)) => {
                    p.values().map(|c| self.node(c)).max().unwrap_or(0)
                }
                _ => self.node(c),
            });
            if n > MAX_EXPANSION {
                return n;
            }
        }
        n
    }

    /// The cost of the target of the ref `r`, counted once.
    fn target(&mut self, r: &str) -> u64 {
        if let Some(&n) = self.done.get(r) {
            return n;
        }
        if !self.open.insert(r.to_string()) {
            return 1;
        }
        let fragment = r.split_once('#').map_or("", |(_, f)| f);
        let doc = self.doc;
        let found = if fragment.is_empty() || fragment.starts_with('/') {
            doc.pointer(&percent_decode(fragment))
        } else {
            self.anchors.get(fragment).copied()
        };
        let n = found.map_or(1, |t| self.node(t));
        self.open.remove(r);
        self.done.insert(r.to_string(), n);
        n
    }
}

/// `%24defs` is `$defs` (RFC 3986 in a URI fragment).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(x)) => {
                out.push(x);
                i += 3;
            }
            (x, _) => {
                out.push(x);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn compile(doc: &Value) -> Result<Validator, String> {
    jsonschema::options().build(doc).map_err(|e| {
        let why = match e.kind() {
            ValidationErrorKind::Referencing(ReferencingError::Unretrievable { uri, .. }) => {
                format!(
                    "$ref {} is outside the file, and aoitap never fetches one: bundle it into the schema's $defs",
                    clip(uri)
                )
            }
            ValidationErrorKind::Referencing(ReferencingError::UnknownSpecification {
                specification,
            }) => format!(
                "unknown $schema {}: aoitap knows draft-04, -06, -07, 2019-09 and 2020-12",
                clip(specification)
            ),
            ValidationErrorKind::Referencing(r) => format!("{r}"),
            _ => {
                let at = e.instance_path().as_str();
                let at = if at.is_empty() { "/" } else { at };
                format!("not a valid JSON Schema: at {at}: {}", describe(&e, false))
            }
        };
        crate::text::one_line(&why)
    })
}

fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut text = Vec::new();
    file.take(MAX_SCHEMA_BYTES + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX_SCHEMA_BYTES {
        return Err(std::io::Error::other("larger than 64 MiB"));
    }
    Ok(text)
}

/// Each event type's definition, for `oneOf`/`anyOf` dispatch: a
/// definition (`$defs` or draft-07's `definitions`) whose `type` property
/// is a `const` (or a one-value `enum`) is that type's; otherwise its name
/// is.
fn branches(doc: &Value) -> HashMap<String, Branch> {
    let mut out = HashMap::new();
    for section in ["definitions", "$defs"] {
        let Some(defs) = doc.get(section).and_then(Value::as_object) else {
            continue;
        };
        for (name, def) in defs {
            let prop = def.pointer("/properties/type");
            let mut types: Vec<&str> = match prop.and_then(|p| p.get("const")) {
                Some(c) => c.as_str().into_iter().collect(),
                None => prop
                    .and_then(|p| p.get("enum"))
                    .and_then(Value::as_array)
                    .map(|vs| vs.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default(),
            };
            if types.is_empty() {
                types.push(name);
            }
            for t in types {
                out.insert(
                    t.to_string(),
                    Branch {
                        pointer: format!("#/{section}/{}", fragment(name)),
                        validator: OnceLock::new(),
                    },
                );
            }
        }
    }
    out
}

/// A definition's name as a URI fragment JSON pointer (RFC 6901 §6).
fn fragment(name: &str) -> String {
    let mut out = String::new();
    for c in name.replace('~', "~0").replace('/', "~1").bytes() {
        if c.is_ascii_alphanumeric() || b"-._~:@!$&'()*+,;=".contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

/// Follow an evaluation path through the document to its first `$ref`; if
/// that names a local definition, its name.
fn first_ref_target(doc: &Value, path: &str) -> Option<String> {
    let mut node = doc;
    for seg in path.split('/').skip(1) {
        if seg == "$ref" {
            let target = node.get("$ref")?.as_str()?;
            let rest = target
                .strip_prefix("#/$defs/")
                .or_else(|| target.strip_prefix("#/definitions/"))?;
            let name = rest.split('/').next()?;
            return Some(clip(&pointer_token(name)));
        }
        let seg = pointer_token(seg);
        node = match node {
            Value::Object(m) => m.get(seg.as_str())?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    None
}

/// A JSON pointer token from a URI fragment: percent-, then `~`-decoded.
fn pointer_token(s: &str) -> String {
    let mut bytes = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(h) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            bytes.push(h);
            i += 3;
            continue;
        }
        bytes.push(b[i]);
        i += 1;
    }
    unescape_token(&String::from_utf8_lossy(&bytes))
}

/// A JSON pointer token's `~1` and `~0` decoded (RFC 6901 §4).
fn unescape_token(s: &str) -> String {
    s.replace("~1", "/").replace("~0", "~")
}

/// A name from the input or the schema, bounded for a message.
fn clip(s: &str) -> String {
    let head = prefix(s, QUOTE_BYTES);
    if head.len() < s.len() {
        format!("{head}…")
    } else {
        head.to_string()
    }
}

/// Does a JSON pointer pass through a key whose value is secret (a
/// `_secret` or `_url` key, docs/contract.md §7.1, or a `--secret-name`)? Its values
/// are never quoted.
fn secret_path(pointer: &str, names: &[String]) -> bool {
    pointer.split('/').skip(1).any(|seg| {
        let key = unescape_token(seg);
        ["_secret", "_SECRET", "_url", "_URL"]
            .iter()
            .any(|end| key.ends_with(end))
            || names.contains(&key)
    })
}

/// One error in words, quoting the value only when it is short and not
/// secret.
fn describe(e: &ValidationError<'_>, secret: bool) -> String {
    let names = |list: &[String]| list.iter().map(|s| clip(s)).collect::<Vec<_>>().join(", ");
    match e.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let s = if unexpected.len() == 1 { "" } else { "s" };
            format!("undeclared field{s} {}", names(unexpected))
        }
        ValidationErrorKind::Required { property } => match property.as_str() {
            Some(p) => format!("missing required field {}", clip(p)),
            None => format!("missing required field {property}"),
        },
        _ if secret => e.masked_with("the secret value").to_string(),
        _ => e.masked_with(preview(e.instance())).to_string(),
    }
}

/// A value as a message shows it: scalars as JSON, if short; containers by
/// kind.
fn preview(v: &Value) -> String {
    match v {
        Value::Object(_) => "the object".into(),
        Value::Array(_) => "the array".into(),
        // Held at the edge of f64 (see `Tree::number`): the value itself
        // was past it.
        Value::Number(n) if n.as_f64().is_some_and(|f| f.abs() == f64::MAX) => {
            "a number past f64's range".into()
        }
        _ => {
            let text = v.to_string();
            if text.len() <= QUOTE_BYTES {
                text
            } else {
                format!("the {}-byte value", text.len())
            }
        }
    }
}

/// A validated JSON text as a `serde_json::Value`, or `None` when it nests
/// past `MAX_DEPTH`.
fn tree(raw: &[u8]) -> Option<Value> {
    // The walker checked the line as UTF-8: this is the only check made,
    // once per line, not once per string.
    let text = std::str::from_utf8(raw).ok()?;
    let mut t = Tree { b: raw, text, i: 0 };
    t.value(0)
}

/// A reader for text the walker has already validated: it never checks,
/// only cuts.
struct Tree<'a> {
    b: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Tree<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        self.ws();
        let c = *self.b.get(self.i)?;
        Some(match c {
            b'{' | b'[' if depth >= MAX_DEPTH => return None,
            b'{' => {
                self.i += 1;
                let mut map = Map::new();
                loop {
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b'}') | None => break,
                        Some(b',') => self.i += 1,
                        _ => {
                            let key = self.string();
                            self.ws();
                            self.i += 1; // the ':'
                            let v = self.value(depth + 1)?;
                            map.insert(key, v);
                        }
                    }
                }
                self.i += 1;
                Value::Object(map)
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b']') | None => break,
                        Some(b',') => self.i += 1,
                        _ => items.push(self.value(depth + 1)?),
                    }
                }
                self.i += 1;
                Value::Array(items)
            }
            b'"' => Value::String(self.string()),
            b't' => self.literal(4, Value::Bool(true)),
            b'f' => self.literal(5, Value::Bool(false)),
            b'n' => self.literal(4, Value::Null),
            _ => self.number(),
        })
    }

    fn literal(&mut self, len: usize, v: Value) -> Value {
        self.i += len;
        v
    }

    fn string(&mut self) -> String {
        let start = self.i + 1;
        let mut i = start;
        let mut escaped = false;
        while i < self.b.len() {
            match self.b[i] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => i += 1,
            }
        }
        let end = i.min(self.b.len());
        self.i = end + 1;
        match self.text.get(start..end) {
            Some(plain) if !escaped => plain.to_owned(),
            _ => unescape(&self.b[start..end]).into_owned(),
        }
    }

    fn number(&mut self) -> Value {
        let start = self.i;
        while self.i < self.b.len()
            && matches!(
                self.b[self.i],
                b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'
            )
        {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("0");
        let integral = !text.contains(['.', 'e', 'E']);
        if integral {
            if let Ok(n) = text.parse::<u64>() {
                return Value::Number(n.into());
            }
            if let Ok(n) = text.parse::<i64>() {
                return Value::Number(n.into());
            }
        }
        let f: f64 = text.parse().unwrap_or(0.0);
        let f = f.clamp(-f64::MAX, f64::MAX);
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// `--schema FILE`, compiled once and shared by every worker (none without
/// the flag); the problem when it cannot be used, which is a usage error
/// before anything is read (docs/contract.md §3.5).
pub fn load_schema(
    path: Option<&Path>,
    secret_names: &[String],
) -> Result<Option<Arc<EventSchema>>, String> {
    path.map(|p| EventSchema::load(p, secret_names).map(Arc::new))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tree_reads_what_serde_json_reads() {
        for text in [
            r#"{"a":[1,-2,3.5,1e2,true,false,null,{"b":"c\n\u00e9"}], "d" : {} }"#,
            r#"[ ]"#,
            r#""x""#,
            r#"18446744073709551615"#,
            r#"-9223372036854775808"#,
        ] {
            let ours = tree(text.as_bytes()).unwrap();
            let theirs: Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours, theirs, "{text}");
        }
    }

    #[test]
    fn tree_holds_what_serde_json_rejects() {
        let v = tree(br#"{"big":1e400,"neg":-1e400,"s":"\ud800","k":1,"k":2}"#).unwrap();
        assert_eq!(v["big"], json!(f64::MAX));
        assert_eq!(v["neg"], json!(-f64::MAX));
        assert_eq!(v["s"], json!("\u{fffd}"));
        assert_eq!(v["k"], json!(2), "the last duplicate wins, as in jq");
        // serde_json reads -0 as the float -0.0; it is the integer 0.
        assert_eq!(tree(b"-0").unwrap(), json!(0));
        let huge = "1".repeat(400);
        assert!(tree(huge.as_bytes()).unwrap().is_number());
    }

    #[test]
    fn tree_stops_at_max_depth() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(tree(deep(MAX_DEPTH).as_bytes()).is_some());
        assert!(tree(deep(MAX_DEPTH + 1).as_bytes()).is_none());
        assert!(tree(deep(100_000).as_bytes()).is_none());
    }

    #[test]
    fn pointers_round_trip() {
        assert_eq!(pointer_token(&fragment("a/b~c d")), "a/b~c d");
        assert_eq!(fragment("aoi:error"), "aoi:error");
    }
}
