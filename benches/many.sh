#!/usr/bin/env bash
# Many streams (docs/contract.md §2.2), side by side in one run, best of REPEAT:
#   - verify -q over FILES small files (one generated stream of 7 lines,
#     about 1.3 KB, copied) with the default workers and with -j 1, against
#     jq's summary idiom over the same files and `cat FILES`; and
#     `verify DIR` against the glob;
#   - split-by-run, summarize and verify --multi-run on one stream of
#     RUNS interleaved runs (64 MiB), with split's files checked byte-exact
#     against the stream, and GNU split writing the same stream round-robin
#     into RUNS files (`split -n r/RUNS`): what the writes alone cost, into
#     the same directory's file system and into tmpfs (/dev/shm);
#   - verify over the BIG reference stream (256 MiB) once and as four
#     operands (hard links), with the default workers: wall time per byte.
# Ratios, not absolute times: the machines are shared and noisy.
#
# usage: benches/many.sh
# env:   FILES=5000  RUNS=1000  RUNS_SIZE=64M  BIG=256M  REPEAT=3  SHARED=../shared
#        WORK=target/bench  SHM=/dev/shm
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
FILES=${FILES:-5000}
RUNS=${RUNS:-1000}
RUNS_SIZE=${RUNS_SIZE:-64M}
BIG=${BIG:-256M}
SHM=${SHM:-/dev/shm}
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
# The reference stream, as compare.sh makes it, and four links to it.
big="$WORK/stream-$BIG-200.jsonl"
[ -s "$big" ] || python3 "$gen" --bytes "$BIG" --line-bytes 200 -o "$big" 2>/dev/null
for i in 1 2 3 4; do ln -f "$big" "$WORK/four-$i.jsonl"; done
cat "$runs" "$big" "$small"/* >/dev/null # into the page cache

# best NAME COMMAND: the least wall time of REPEAT runs (microseconds, from
# EPOCHREALTIME), and the peak RSS of the last, in KiB.
declare -A best peak
best() {
  local name=$1 cmd=$2 t0 t1 us
  for _ in $(seq 1 "$REPEAT"); do
    # Output directories are made fresh, outside the time: what a run
    # before left behind is written back first.
    rm -rf "$WORK/out" "$SHM/aoitap-many" && mkdir -p "$WORK/out/gnu" "$SHM/aoitap-many/gnu" && sync
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
best verify_files_j1 "'$aoitap' verify -q -j 1 --continue-on-error *.jsonl"
best jq_files "jq -c 'select(.type==\"aoi:summary\") | .ok == true' *.jsonl"
best cat_files "cat *.jsonl"
best verify_dir "'$aoitap' verify -q --continue-on-error ."
cd - >/dev/null
out="$WORK/split-out"
best split "'$aoitap' split-by-run -q --continue-on-error --dir '$WORK/out/split' '$runs'"
best gnu_split "split -n r/$RUNS -a 5 '$runs' '$WORK/out/gnu/x'"
best split_shm "'$aoitap' split-by-run -q --continue-on-error --dir '$SHM/aoitap-many/split' '$runs'"
best gnu_split_shm "split -n r/$RUNS -a 5 '$runs' '$SHM/aoitap-many/gnu/x'"
best summarize "'$aoitap' summarize --continue-on-error '$runs'"
best verify_multi "'$aoitap' verify -q --multi-run --continue-on-error '$runs'"
best verify_one "'$aoitap' verify -q --continue-on-error '$big'"
best verify_four "'$aoitap' verify -q --continue-on-error '$WORK'/four-?.jsonl"
# The split measured last, kept for the byte-exact check.
rm -rf "$WORK/out" "$SHM/aoitap-many"
rm -rf "$out" && "$aoitap" split-by-run -q --continue-on-error --dir "$out" "$runs" >/dev/null || true

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
for n in verify_files verify_files_j1 jq_files cat_files verify_dir split gnu_split split_shm \
  gnu_split_shm summarize verify_multi verify_one verify_four; do
  printf '%-16s %10s  %8s KiB peak\n' "$n" "$(ms "$n")" "${peak[$n]}"
done
# Four times the bytes: the time per byte is the time over four.
per_byte=$(awk -v a="${best[verify_four]}" -v b="${best[verify_one]}" 'BEGIN { printf "%.2fx", a / 4 / b }')
echo
echo "| ratio | measured | target |"
echo "|---|---|---|"
echo "| jq idiom / verify -q, $FILES files | $(ratio jq_files verify_files) | >= 2x |"
echo "| verify -q -j 1 / verify -q, $FILES files | $(ratio verify_files_j1 verify_files) | (the workers' gain) |"
echo "| verify -q / cat, $FILES files | $(ratio verify_files cat_files) | <= 2x |"
echo "| verify DIR / verify FILES | $(ratio verify_dir verify_files) | about 1x |"
echo "| split-by-run / verify --multi-run, $RUNS runs | $(ratio split verify_multi) | <= 2x |"
echo "| GNU split -n r/$RUNS / verify --multi-run (the writes alone) | $(ratio gnu_split verify_multi) | |"
echo "| split-by-run / verify --multi-run, into tmpfs | $(ratio split_shm verify_multi) | |"
echo "| GNU split -n r/$RUNS / verify --multi-run, into tmpfs | $(ratio gnu_split_shm verify_multi) | |"
echo "| summarize / verify --multi-run, $RUNS runs | $(ratio summarize verify_multi) | <= 1.5x |"
echo "| split's files | $nfiles, byte-exact: $exact | $RUNS, yes |"
echo "| verify peak RSS, $FILES files | ${peak[verify_files]} KiB | < 32768 KiB |"
echo "| verify, four $BIG files / one, wall time per byte | $per_byte | <= 1x |"
