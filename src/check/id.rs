//! Run ids as aoitap keeps them: bounded in bytes whatever the input
//! (docs/contract.md §3.2), and shown cut when long.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Ids longer than this are kept as a prefix and a digest.
const ID_BYTES: usize = 256;

/// A run id as it is kept: bounded in bytes whatever the input (docs/contract.md §3.2:
/// state is bounded in bytes). A long id becomes its first 192 bytes, a
/// 0xFF byte (never in UTF-8, so never in a short id) and a 64-bit digest
/// of the whole.
#[inline]
pub fn id_key(id: &[u8]) -> Cow<'_, [u8]> {
    if id.len() <= ID_BYTES {
        return Cow::Borrowed(id);
    }
    let mut key = id[..192].to_vec();
    key.push(0xff);
    key.extend_from_slice(&digest(id).to_be_bytes());
    Cow::Owned(key)
}

/// A 64-bit digest, the same within one process (SipHash with fixed
/// keys): what is kept where the value itself would cost too much.
pub fn digest(x: &(impl Hash + ?Sized)) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    x.hash(&mut h);
    h.finish()
}

/// A run id as reports show it: a long one cut, with its length.
pub(super) fn run_name(id: &str) -> String {
    if id.len() <= ID_BYTES {
        return id.to_string();
    }
    format!("{}… ({} bytes)", crate::text::prefix(id, 120), id.len())
}

/// A map keyed by `digest`s: the key is a hash already, so it is its own
/// (hashing it again with SipHash was a second pass per line).
pub type ByDigest<V> = HashMap<u64, V, BuildHasherDefault<Prehashed>>;

/// The hasher of `ByDigest`: a `u64` key as it is.
#[derive(Default)]
pub struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys come here; any other is folded in, never lost.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
