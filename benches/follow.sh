#!/usr/bin/env bash
# What following costs when nothing it follows changes (docs/contract.md
# §8.2): the CPU time aoitap used, from /proc/PID/stat, over the wall time,
# in three cases of SECONDS_IDLE each:
#   - quiet: FILES followed files, nothing written anywhere;
#   - busy: the same, while another program writes WRITES lines a second
#     to a file of its own in the watched directory (target: < 2% of a core);
#   - open: one followed file holding RUNS open runs (a meta each, no
#     summary), with --multi-run --run-idle-timeout IDLE_TIMEOUT (target:
#     < 1% of a core).
# docs/contract.md §8.1: a ratio, not a time. The writer's own CPU is not
# counted: only aoitap's.
#
# usage: benches/follow.sh
# env:   FILES=100 WRITES=1500 RUNS=30000 SECONDS_IDLE=30 IDLE_TIMEOUT=10m
#        AOITAP=target/release/aoitap
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${FILES:-100}
WRITES=${WRITES:-1500}
RUNS=${RUNS:-30000}
IDLE=${SECONDS_IDLE:-30}
IDLE_TIMEOUT=${IDLE_TIMEOUT:-10m}
AOITAP=${AOITAP:-target/release/aoitap}
[ -x "$AOITAP" ] || cargo build --release --quiet
dir=$(mktemp -d)
writer=
trap '[ -z "$writer" ] || kill "$writer" 2>/dev/null; rm -rf "$dir"' EXIT
hz=$(getconf CLK_TCK)

meta() {
  printf '{"type":"aoi:meta","aoi":{"seq":0,"run":"R%s"},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"x","schema_version":"1.0.0"}\n' "$1"
}

# measure NAME ARGS...: aoitap ARGS in the background, started and read
# for 2 s, then its CPU over SECONDS_IDLE.
measure() {
  local name=$1
  shift
  "$AOITAP" "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep 2
  local t0 t1 s0 s1
  t0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  s0=$EPOCHREALTIME
  sleep "$IDLE"
  t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  s1=$EPOCHREALTIME
  kill -INT "$pid"
  wait "$pid" || true
  awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s0="$s0" -v s1="$s1" -v n="$name" \
    'BEGIN { cpu = (b - a) / hz; wall = s1 - s0;
             printf "%-6s %.3f s CPU in %.1f s = %.2f%% of a core\n", n, cpu, wall, 100 * cpu / wall }'
}

mkdir "$dir/logs"
for i in $(seq 1 "$FILES"); do meta "$i" >"$dir/logs/f$i.jsonl"; done
follow=(verify --follow --multi-run "$dir/logs/*.jsonl")
echo "following $FILES files in one directory, $IDLE s each case:"
measure quiet "${follow[@]}"

# Another program's log in the same directory, a line written and flushed
# WRITES times a second (paced against the clock, not by sleeps alone).
python3 - "$dir/logs/other.log" "$WRITES" <<'EOF' &
import sys, time
path, rate = sys.argv[1], int(sys.argv[2])
start, n = time.monotonic(), 0
with open(path, "a", buffering=1) as f:
    while True:
        f.write("not followed: line %d\n" % n)
        n += 1
        ahead = start + n / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
EOF
writer=$!
measure busy "${follow[@]}"
lines=$(wc -l <"$dir/logs/other.log")
kill "$writer"
writer=
echo "  (the writer wrote $lines lines)"

# RUNS open runs in one file: a meta each, no summary.
for i in $(seq 1 "$RUNS"); do meta "$i"; done >"$dir/open.jsonl"
measure open verify --follow --multi-run --run-idle-timeout "$IDLE_TIMEOUT" "$dir/open.jsonl"
