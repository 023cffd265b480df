//! How deep JSON text read so far is nested, its strings skipped: where a
//! value written over several lines ends (a pretty document, a secret's
//! value after its key), without a parse of the lines one by one.

/// The bracket depth of JSON text read so far, strings skipped.
#[derive(Default)]
pub struct Nesting {
    depth: u64,
    in_string: bool,
    escaped: bool,
    /// A closing bracket with none open: the text is no document.
    broken: bool,
}

impl Nesting {
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => match self.depth.checked_sub(1) {
                    Some(d) => self.depth = d,
                    None => self.broken = true,
                },
                _ => {}
            }
        }
    }

    /// The text read so far ends inside a string.
    pub fn in_string(&self) -> bool {
        self.in_string
    }

    /// The text may still close: parsing it now would say only "open".
    pub fn open(&self) -> bool {
        self.depth > 0 && !self.broken
    }
}

#[cfg(test)]
mod tests {
    use super::Nesting;

    fn nesting(lines: &[&str]) -> Nesting {
        let mut n = Nesting::default();
        for l in lines {
            n.feed(l.as_bytes());
        }
        n
    }

    #[test]
    fn a_document_is_open_until_its_brackets_close_strings_aside() {
        assert!(nesting(&["{", r#""a": [1,"#]).open());
        assert!(!nesting(&["{", r#""a": [1,"#, "2]}"]).open());
        // Brackets and an escaped quote inside a string are text.
        assert!(nesting(&["{", r#""a": "}] \" }""#]).open());
        assert!(!nesting(&["{", r#""a": "}] \" }""#, "}"]).open());
        // More closers than openers: no document, so it is parsed (and
        // found invalid) at once.
        assert!(!nesting(&["{", "}}", "{"]).open());
    }
}
