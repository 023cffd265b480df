//! Empty: this package is its benchmarks (`throughput.rs`).
