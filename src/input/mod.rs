//! The input side, in the order a byte meets it: `source` (fds, pipes,
//! polling, the relay copy), `scan` (the one line cutter) and `pipeline`
//! (the reader and parser threads, the byte budget, the order of batches).

pub mod pipeline;
pub mod scan;
pub mod source;
