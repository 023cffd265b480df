//! Criterion micro-benchmarks of the code the binary runs: the cutter, the
//! one parse per line (beside serde_json and simd-json on the same lines),
//! and cut + parse + judge on one thread, on an in-memory stream shaped
//! like the reference one
//! (`gen_aoi_stream.py --line-bytes 200`). Whole-process figures against
//! jq and cat come from `benches/compare.sh`.

use std::hint::black_box;
use std::io::{self, Cursor};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use aoitap::check::{Checker, Config, Finding, RunVerdict, Sink};
use aoitap::input::lines::Lines;
use aoitap::input::scan::{Batch, Cutter};
use aoitap::json::Parser;
use serde::de::IgnoredAny;

const RUN: &str = "01JZQ7X4TQ9BFY1XJ6D24HSPXY";

/// About `bytes` of a conforming single-run stream with ~200-byte lines.
fn stream(bytes: usize) -> Vec<u8> {
    let words = [
        "agent", "operable", "stream", "schema", "summary", "retry", "index", "query", "cursor",
        "token",
    ];
    let mut out = Vec::with_capacity(bytes + 4096);
    out.extend_from_slice(format!(r#"{{"type":"aoi:meta","aoi":{{"seq":0,"run":"{RUN}"}},"tool":"bench","tool_version":"1.0.0","aoi_version":"1.0-alpha","schema_name":"search.hit","schema_version":"1.0.0","command":"search"}}"#).as_bytes());
    out.push(b'\n');
    let mut seq = 1u64;
    while out.len() < bytes {
        let snippet: Vec<&str> = (0..7)
            .map(|i| words[(seq as usize * 7 + i * 3) % words.len()])
            .collect();
        let line = format!(
            r#"{{"type":"hit","aoi":{{"seq":{seq},"run":"{RUN}"}},"rank":{seq},"id":"doc_{:08}","title":"Streaming JSON Lines","snippet":"{}"}}"#,
            seq * 7919 % 100_000_000,
            snippet.join(" ")
        );
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        seq += 1;
    }
    out.extend_from_slice(format!(r#"{{"type":"aoi:summary","aoi":{{"seq":{seq},"run":"{RUN}"}},"ok":true,"event_count":{},"count":{}}}"#, seq + 1, seq - 1).as_bytes());
    out.push(b'\n');
    out
}

struct Count(u64);

impl Sink for Count {
    fn finding(&mut self, _: &Finding) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn run(&mut self, _: RunVerdict) -> io::Result<()> {
        Ok(())
    }
}

/// The batches the pipeline's reader thread cuts: read until a batch is
/// full or the input ends, then take it (no parse).
fn cut_each(data: &[u8], mut each: impl FnMut(Batch)) {
    let mut cut = Cutter::new(Cursor::new(data), 64 << 20);
    loop {
        let more = cut.read().unwrap();
        if cut.full() || !more {
            let batch = cut.take(Batch::default());
            if batch.is_empty() && !more {
                return;
            }
            each(batch);
        }
    }
}

fn benches(c: &mut Criterion) {
    let data = stream(16 << 20);
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Bytes(data.len() as u64));
    // What the binary's reader thread does: cut into batches.
    g.bench_function("cut", |b| {
        b.iter(|| {
            let mut n = 0usize;
            cut_each(&data, |batch| n += batch.bytes().len());
            black_box(n)
        })
    });
    // What the parser threads do: one walk per line into the batch's index.
    let mut batches = vec![];
    cut_each(&data, |batch| batches.push(batch));
    g.bench_function("parse", |b| {
        let mut parser = Parser::new();
        b.iter(|| {
            for batch in batches.iter_mut() {
                batch.parse(&mut parser, None);
            }
            black_box(batches.len())
        })
    });
    // The same lines through serde_json and simd-json, validating only:
    // the measurement behind keeping a walker of our own (src/json/mod.rs).
    g.bench_function("parse-serde_json", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for line in data.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                n += u64::from(serde_json::from_slice::<IgnoredAny>(line).is_ok());
            }
            black_box(n)
        })
    });
    g.bench_function("parse-simd_json", |b| {
        let mut copy = Vec::new();
        let mut buffers = simd_json::Buffers::default();
        b.iter(|| {
            let mut n = 0u64;
            for line in data.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                // simd-json rewrites its input: it needs a copy of each line.
                copy.clear();
                copy.extend_from_slice(line);
                n += u64::from(simd_json::to_tape_with_buffers(&mut copy, &mut buffers).is_ok());
            }
            black_box(n)
        })
    });
    // The whole of verify on one thread: cut, parse, judge.
    g.bench_function("verify", |b| {
        let cfg = Config::default();
        let mut lines = Lines::default();
        b.iter(|| {
            let mut cut = Cutter::new(Cursor::new(&data), 64 << 20);
            let mut check = Checker::new(&cfg);
            let mut sink = Count(0);
            while let Some(batch) = lines.next(&mut cut, None).unwrap() {
                for line in batch.lines() {
                    check.judge(&line, &mut sink).unwrap();
                }
            }
            check.finish(&mut sink).unwrap();
            black_box(sink.0)
        })
    });
    g.finish();
}

criterion_group! {
    name = throughput;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(throughput);
