//! The input side, in the order a byte meets it: `source` (fds, pipes,
//! polling, the relay copy), `scan` (the one line cutter) and `pipeline`
//! (the reader and parser threads, the byte budget, the order of batches),
//! and `line_check`, the per-line work a batch's parse may carry;
//! `file_id`, which tells whether two paths are one file; `walk`, the
//! stream files a directory operand stands for.

pub mod file_id;
pub mod glob;
pub mod line_check;
pub mod lines;
pub mod pipeline;
pub mod scan;
pub mod source;
pub mod walk;
