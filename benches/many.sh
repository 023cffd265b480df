#!/usr/bin/env bash
# Many streams (DESIGN §14), side by side in one run, best of REPEAT:
#   - verify -q over FILES small files (one generated stream of 7 lines,
#     about 1.3 KB, copied) against jq's summary idiom over the same files
#     and `cat FILES`; and `verify DIR` against the glob;
#   - split-by-run, summarize and verify --multi-run on one stream of
#     RUNS interleaved runs (64 MiB), with split's files checked byte-exact
#     against the stream.
# Ratios, not absolute times: the machines are shared and noisy.
#
# usage: benches/many.sh
# env:   FILES=5000  RUNS=1000  RUNS_SIZE=64M  REPEAT=3  SHARED=../shared  WORK=target/bench
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
FILES=${FILES:-5000}
RUNS=${RUNS:-1000}
RUNS_SIZE=${RUNS_SIZE:-64M}
REPEAT=${REPEAT:-3}
SHARED=${SHARED:-../shared}
WORK=${WORK:-target/bench}
gen=$SHARED/bench/gen_aoi_stream.py
[ -f "$gen" ] || { echo "many.sh: no $gen: set SHARED" >&2; exit 1; }
cargo build --release --quiet
aoitap=$(realpath "${CARGO_TARGET_DIR:-target}/release/aoitap")
mkdir -p "$WORK"
WORK=$(realpath "$WORK")
small="$WORK/small-$FILES"
if [ ! -d "$small" ]; then
  mkdir -p "$small.tmp"
  python3 "$gen" --events 7 --seed 1 -o "$small.tmp/one.jsonl" 2>/dev/null
  for i in $(seq 1 "$FILES"); do cp "$small.tmp/one.jsonl" "$small.tmp/f$i.jsonl"; done
  rm "$small.tmp/one.jsonl"
  mv "$small.tmp" "$small"
fi
runs="$WORK/runs-$RUNS-$RUNS_SIZE.jsonl"
[ -s "$runs" ] || python3 "$gen" --bytes "$RUNS_SIZE" --runs "$RUNS" -o "$runs" 2>/dev/null
cat "$runs" "$small"/* >/dev/null # into the page cache

# best NAME COMMAND: the least wall time of REPEAT runs (microseconds, from
# EPOCHREALTIME), and the peak RSS of the last, in KiB.
declare -A best peak
best() {
  local name=$1 cmd=$2 t0 t1 us
  for _ in $(seq 1 "$REPEAT"); do
    t0=$EPOCHREALTIME
    /usr/bin/time -o "$WORK/many.time" -f '%M' sh -c "$cmd" >/dev/null 2>&1 || true
    t1=$EPOCHREALTIME
    us=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1e6 }')
    if [ -z "${best[$name]:-}" ] || [ "$us" -lt "${best[$name]}" ]; then best[$name]=$us; fi
    peak[$name]=$(tail -1 "$WORK/many.time")
  done
}
cd "$small"
best verify_files "'$aoitap' verify -q --continue-on-error *.jsonl"
best jq_files "jq -c 'select(.type==\"aoi:summary\") | .ok == true' *.jsonl"
best cat_files "cat *.jsonl"
best verify_dir "'$aoitap' verify -q --continue-on-error ."
cd - >/dev/null
out="$WORK/split-out"
best split "rm -rf '$out' && '$aoitap' split-by-run -q --continue-on-error --dir '$out' '$runs'"
best summarize "'$aoitap' summarize --continue-on-error '$runs'"
best verify_multi "'$aoitap' verify -q --multi-run --continue-on-error '$runs'"

# split's files, byte-exact: every line of the stream in its run's file.
nfiles=$(find "$out" -name '*.jsonl' | wc -l)
exact=no
if [ "$(cat "$out"/*.jsonl | wc -c)" = "$(wc -c <"$runs")" ] &&
   [ "$(cat "$out"/*.jsonl | sort | md5sum)" = "$(sort "$runs" | md5sum)" ]; then
  exact=yes
fi

ratio() { awk -v a="${best[$1]}" -v b="${best[$2]}" 'BEGIN { printf "%.2fx", a / b }'; }
ms() { awk -v a="${best[$1]}" 'BEGIN { printf "%.3f s", a / 1e6 }'; }
echo "small files: $FILES x $(stat -c %s "$small/f1.jsonl") bytes; runs: $runs ($RUNS runs), best of $REPEAT"
for n in verify_files jq_files cat_files verify_dir split summarize verify_multi; do
  printf '%-14s %10s  %8s KiB peak\n' "$n" "$(ms "$n")" "${peak[$n]}"
done
echo
echo "| ratio | measured | target |"
echo "|---|---|---|"
echo "| jq idiom / verify -q, $FILES files | $(ratio jq_files verify_files) | >= 2x |"
echo "| verify -q / cat, $FILES files | $(ratio verify_files cat_files) | <= 2x |"
echo "| verify DIR / verify FILES | $(ratio verify_dir verify_files) | about 1x |"
echo "| split-by-run / verify --multi-run, $RUNS runs | $(ratio split verify_multi) | <= 2x |"
echo "| summarize / verify --multi-run, $RUNS runs | $(ratio summarize verify_multi) | <= 1.5x |"
echo "| split's files | $nfiles, byte-exact: $exact | $RUNS, yes |"
echo "| verify peak RSS, $FILES files | ${peak[verify_files]} KiB | < 32768 KiB |"
