#!/usr/bin/env bash
# What following quiet files costs (issue: a follower of 100 quiet files
# uses under 1% of a core over 30 s): the CPU time aoitap used, from
# /proc, over the wall time. docs/contract.md §7: a ratio, not a time.
#
# usage: benches/follow_idle.sh     env: FILES=100 SECONDS_IDLE=30 AOITAP=target/release/aoitap
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${FILES:-100}
IDLE=${SECONDS_IDLE:-30}
AOITAP=${AOITAP:-target/release/aoitap}
[ -x "$AOITAP" ] || cargo build --release --quiet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq 1 "$FILES"); do
  printf '{"type":"aoi:meta","aoi":{"seq":0,"run":"R%s"},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"x","schema_version":"1.0.0"}\n' "$i" > "$dir/f$i.jsonl"
done
"$AOITAP" verify --follow --multi-run --run-idle-timeout 10s "$dir/*.jsonl" > /dev/null 2>&1 &
pid=$!
sleep 2 # started, the files opened and read
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks)
s0=$EPOCHREALTIME
sleep "$IDLE"
t1=$(ticks)
s1=$EPOCHREALTIME
kill -INT "$pid"
wait "$pid" || true
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s0="$s0" -v s1="$s1" -v n="$FILES" \
  'BEGIN { cpu = (b - a) / hz; wall = s1 - s0;
           printf "following %d quiet files: %.3f s CPU in %.1f s = %.2f%% of a core\n", n, cpu, wall, 100 * cpu / wall }'
