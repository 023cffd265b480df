//! Criterion micro-benchmarks: the scanner, the JSON pass, and the whole
//! checker, on an in-memory stream shaped like the reference one
//! (`gen_aoi_stream.py --line-bytes 200`). Whole-process figures against
//! jq and cat come from `benches/compare.sh`.

use std::hint::black_box;
use std::io::{self, Cursor};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use aoitap::check::{Checker, Config, Finding, RunReport, Sink};
use aoitap::event::Parser;
use aoitap::scan::{Line, Scanner};

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
    fn run(&mut self, _: &RunReport) -> io::Result<()> {
        Ok(())
    }
}

fn benches(c: &mut Criterion) {
    let data = stream(16 << 20);
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("scan", |b| {
        b.iter(|| {
            let mut scan = Scanner::new(Cursor::new(&data), 64 << 20);
            let mut n = 0u64;
            while let Some(line) = scan.next_line().unwrap() {
                if let Line::Complete(l) = line {
                    n += l.len() as u64;
                }
            }
            black_box(n)
        })
    });
    g.bench_function("parse", |b| {
        let mut parser = Parser::new();
        b.iter(|| {
            let mut n = 0u64;
            for line in data.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                n += u64::from(parser.parse(line).unwrap().is_object());
            }
            black_box(n)
        })
    });
    g.bench_function("verify", |b| {
        let cfg = Config::default();
        b.iter(|| {
            let mut scan = Scanner::new(Cursor::new(&data), 64 << 20);
            let mut check = Checker::new(&cfg);
            let mut sink = Count(0);
            while let Some(line) = scan.next_line().unwrap() {
                check.line(line, &mut sink).unwrap();
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
