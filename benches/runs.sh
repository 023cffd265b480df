#!/usr/bin/env bash
# summarize and reconcile over many interleaved runs, against
# `verify --multi-run` on the same stream (docs/contract.md §8.2: within
# 1.2x), at each count of RUN_COUNTS. The three commands alternate, round
# after round, REPEAT rounds. Two figures for each ratio: the median of
# the rounds' own ratios (each taken on the same few hundred milliseconds
# of the machine: the figure that counts), and best against best. Ratios,
# not absolute times: the machines are shared and noisy (docs/contract.md
# §8.1), a run of verify here taking from 1x to 2x its best.
#
# usage: benches/runs.sh
# env:   RUN_COUNTS="1000 10000"  SIZE=64M  REPEAT=7  SHARED=../shared
#        WORK=target/bench  AOITAP=target/release/aoitap
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_COUNTS=${RUN_COUNTS:-1000 10000}
SIZE=${SIZE:-64M}
REPEAT=${REPEAT:-7}
SHARED=${SHARED:-../shared}
WORK=${WORK:-target/bench}
gen=$SHARED/bench/gen_aoi_stream.py
[ -f "$gen" ] || { echo "runs.sh: no $gen: set SHARED" >&2; exit 1; }
if [ -z "${AOITAP:-}" ]; then
  cargo build --release --quiet
  AOITAP=${CARGO_TARGET_DIR:-target}/release/aoitap
fi
mkdir -p "$WORK"

names=(verify summarize reconcile)
echo "| runs | summarize / verify --multi-run: median (best) | reconcile / verify --multi-run | target |"
echo "|---|---|---|---|"
for runs in $RUN_COUNTS; do
  stream="$WORK/runs-$runs-$SIZE.jsonl"
  [ -s "$stream" ] || python3 "$gen" --bytes "$SIZE" --runs "$runs" -o "$stream" 2>/dev/null
  cat "$stream" >/dev/null # into the page cache
  cmds=(
    "'$AOITAP' verify -q --multi-run --continue-on-error '$stream'"
    "'$AOITAP' summarize --continue-on-error '$stream'"
    "'$AOITAP' reconcile --continue-on-error '$stream'"
  )
  declare -A best=() rounds=()
  for _ in $(seq 1 "$REPEAT"); do
    declare -A took=()
    for i in "${!names[@]}"; do
      t0=$EPOCHREALTIME
      sh -c "${cmds[$i]}" >/dev/null 2>&1 || true
      t1=$EPOCHREALTIME
      us=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1e6 }')
      n=${names[$i]}
      took[$n]=$us
      if [ -z "${best[$n]:-}" ] || [ "$us" -lt "${best[$n]}" ]; then best[$n]=$us; fi
    done
    for n in summarize reconcile; do
      rounds[$n]+="$(awk -v a="${took[$n]}" -v b="${took[verify]}" 'BEGIN { printf "%.4f", a / b }') "
    done
    unset took
  done
  ratio() {
    local median
    median=$(printf '%s\n' ${rounds[$1]} | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    awk -v m="$median" -v a="${best[$1]}" -v b="${best[verify]}" 'BEGIN { printf "%.2fx (%.2fx)", m, a / b }'
  }
  echo "| $runs | $(ratio summarize) | $(ratio reconcile) | <= 1.2x |"
  echo "  ($runs runs: verify --multi-run best $(awk -v a="${best[verify]}" 'BEGIN { printf "%.3f s", a / 1e6 }'))" >&2
  unset best rounds
done
