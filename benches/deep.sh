#!/usr/bin/env bash
# filter reads a field nested 99,990 deep in time linear in the line
# (docs/contract.md §3.4): filter against verify on the same files, alternating, the
# best of RUNS each. Two files: the one 200 KB line the issue names (whole
# processes, start-up included), and 50 such lines (the per-line cost).
# Then `[..]` against `[recurse]` on the same files: `..` is one pass too.
#
# usage: benches/deep.sh    env: WORK=target/bench RUNS=7 DEPTH=99990
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-target/bench}
RUNS=${RUNS:-7}
DEPTH=${DEPTH:-99990}
mkdir -p "$WORK"
cargo build --release --quiet
aoitap=${CARGO_TARGET_DIR:-target}/release/aoitap
deep() { # lines path
  python3 - "$1" "$2" "$DEPTH" <<'PY'
import sys
k, path, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
run = '"run":"DEEP"'
with open(path, "w") as f:
    f.write('{"type":"aoi:meta","aoi":{"seq":0,%s},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1.0.0","command":"c"}\n' % run)
    for seq in range(1, k + 1):
        f.write('{"type":"hit","aoi":{"seq":%d,%s},"d":%s1%s}\n' % (seq, run, "[" * n, "]" * n))
    f.write('{"type":"aoi:summary","aoi":{"seq":%d,%s},"ok":true,"event_count":%d,"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1.0.0"}\n' % (k + 1, run, k + 2))
PY
}
best() { # command...: the best wall time of RUNS, in ms
  local b= s e ms
  for _ in $(seq "$RUNS"); do
    s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N)
    ms=$(( (e - s) / 1000 )); { [ -z "$b" ] || [ "$ms" -lt "$b" ]; } && b=$ms
  done
  echo "$b"
}
for k in 1 50; do
  f="$WORK/deep-$DEPTH-x$k.jsonl"
  [ -s "$f" ] || deep "$k" "$f"
  v=0 p=0
  # Alternate the two, so drift on a shared machine falls on both.
  for _ in 1 2 3; do
    a=$(best "$aoitap" verify -q "$f"); b=$(best "$aoitap" filter -q '.d[0][0] | length' "$f")
    [ "$v" -eq 0 ] || [ "$a" -lt "$v" ] && v=$a
    [ "$p" -eq 0 ] || [ "$b" -lt "$p" ] && p=$b
  done
  awk -v k="$k" -v v="$v" -v p="$p" -v n="$DEPTH" 'BEGIN {
    printf "%d line(s) %d deep: verify %.1f ms, filter .d[0][0]|length %.1f ms: %.1fx verify\n", k, n, v / 1000, p / 1000, p / v }'
done
for k in 1 50; do
  f="$WORK/deep-$DEPTH-x$k.jsonl"
  r=0 d=0
  for _ in 1 2 3; do
    a=$(best "$aoitap" filter -q '[recurse] | length' "$f"); b=$(best "$aoitap" filter -q '[..] | length' "$f")
    [ "$r" -eq 0 ] || [ "$a" -lt "$r" ] && r=$a
    [ "$d" -eq 0 ] || [ "$b" -lt "$d" ] && d=$b
  done
  awk -v k="$k" -v r="$r" -v d="$d" -v n="$DEPTH" 'BEGIN {
    printf "%d line(s) %d deep: filter [recurse] %.1f ms, [..] %.1f ms: %.2fx [recurse]\n", k, n, r / 1000, d / 1000, d / r }'
done
