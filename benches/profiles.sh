#!/usr/bin/env bash
# A producer profile costs what typed NDJSON costs (docs/contract.md §6.3):
# `verify --profile claude-stream` against `verify --protocol ndjson` on
# the same Claude-shaped stream, round-robin in one run, and against the
# jq program that makes the same checks (profiles/claude-stream.jq, on a
# smaller stream from the same generator, its time scaled by bytes).
# Medians of REPEAT rounds; the ratios are the figures.
#
# usage: benches/profiles.sh
# env:   SIZE=256M  JQ_SIZE=16M  REPEAT=9  JQ_REPEAT=3  WORK=target/bench
#        SKIP_JQ=1
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-256M}
JQ_SIZE=${JQ_SIZE:-16M}
REPEAT=${REPEAT:-9}
JQ_REPEAT=${JQ_REPEAT:-3}
WORK=${WORK:-target/bench}
mkdir -p "$WORK"
gen() { # size -> path
  local f="$WORK/claude-stream-$1.jsonl"
  [ -s "$f" ] || python3 benches/profiles/gen_claude_stream.py --bytes "$1" -o "$f"
  echo "$f"
}
stream=$(gen "$SIZE")
jq_stream=$(gen "$JQ_SIZE")
cargo build --release --quiet
aoitap=${CARGO_TARGET_DIR:-target}/release/aoitap
bytes=$(stat -L -c %s "$stream")
jq_bytes=$(stat -L -c %s "$jq_stream")
cat "$stream" "$jq_stream" >/dev/null # into the page cache
# Both verdicts first: the bench times the success path.
"$aoitap" verify -q --profile claude-stream "$stream"
"$aoitap" verify -q --protocol ndjson "$stream"

names=() cmds=()
add() { names+=("$1"); cmds+=("$2"); }
declare -A walls wall
once() {
  local t0 t1
  t0=$EPOCHREALTIME
  sh -c "${cmds[$1]}" >/dev/null 2>&1 || true
  t1=$EPOCHREALTIME
  walls[${names[$1]}]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
}
median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
add profile "exec '$aoitap' verify -q --profile claude-stream '$stream'"
add ndjson "exec '$aoitap' verify -q --protocol ndjson '$stream'"
add auto "exec '$aoitap' verify -q '$stream'"
n=${#names[@]}
if [ -z "${SKIP_JQ:-}" ]; then
  add jq "exec jq -n -c -f benches/profiles/claude-stream.jq '$jq_stream'"
fi
for round in $(seq "$REPEAT"); do
  for i in "${!names[@]}"; do
    [ "$i" -ge "$n" ] && [ "$round" -gt "$JQ_REPEAT" ] && continue
    once "$i"
  done
done
for name in "${names[@]}"; do wall[$name]=$(median "${walls[$name]}"); done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo "stream: $stream ($bytes bytes), median of $REPEAT rounds"
for name in profile ndjson auto; do
  printf '%-8s %8.3f s %8.0f MB/s\n' "$name" "${wall[$name]}" \
    "$(awk -v b="$bytes" -v s="${wall[$name]}" 'BEGIN { print b / s / 1e6 }')"
done
echo
echo "| ratio | measured | target |"
echo "|---|---|---|"
echo "| verify --profile claude-stream / verify --protocol ndjson | $(ratio "${wall[profile]}" "${wall[ndjson]}")x | <= 1.25x |"
echo "| verify (auto, detected) / verify --protocol ndjson | $(ratio "${wall[auto]}" "${wall[ndjson]}")x | |"
if [ -n "${wall[jq]:-}" ]; then
  scaled=$(awk -v s="${wall[jq]}" -v a="$bytes" -v b="$jq_bytes" 'BEGIN { printf "%.3f", s * a / b }')
  echo "| jq claude-stream.jq / verify --profile claude-stream | $(ratio "$scaled" "${wall[profile]}")x | (jq on $jq_bytes bytes, scaled) |"
fi
