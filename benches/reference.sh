#!/usr/bin/env bash
# Instructions executed by the reference commit's binary and by this
# tree's, on the same 8 MiB stream, for the commands whose speed is held
# to a fixed reference: verify, summarize, reconcile, strip-envelope,
# upgrade.
# Instructions do not move with a shared machine's load, so a drift of
# a few percent shows here where wall times cannot see it
# (benches/RESULTS.md says how the counts are taken).
#
# The reference is built once, from `git archive REF`, in a directory
# and target of its own under WORK, and kept: later runs compare with
# the same binary, never with the day before.
#
# usage: benches/reference.sh
# env:   REF=5742a7d  SHARED=../shared  WORK=target/bench  SIZE=8M
#        LINE_BYTES=200  COMMANDS="verify summarize ..."
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
REF=${REF:-5742a7d}
SHARED=${SHARED:-../shared}
WORK=${WORK:-target/bench}
SIZE=${SIZE:-8M}
LINE_BYTES=${LINE_BYTES:-200}
COMMANDS=${COMMANDS:-verify summarize reconcile strip-envelope upgrade}
command -v valgrind >/dev/null || { echo "reference.sh: needs valgrind" >&2; exit 1; }
[ -f "$SHARED/bench/gen_aoi_stream.py" ] || {
  echo "reference.sh: no $SHARED/bench/gen_aoi_stream.py: set SHARED to the shared directory" >&2
  exit 1
}
mkdir -p "$WORK"
stream="$WORK/stream-$SIZE-$LINE_BYTES.jsonl"
[ -s "$stream" ] ||
  python3 "$SHARED/bench/gen_aoi_stream.py" --bytes "$SIZE" --line-bytes "$LINE_BYTES" -o "$stream"

ref="$WORK/reference-$REF"
if [ ! -x "$ref/target/release/aoitap" ]; then
  rm -rf "$ref/src"
  mkdir -p "$ref/src"
  git archive "$REF" | tar -x -C "$ref/src"
  CARGO_TARGET_DIR="$ref/target" cargo build --release --locked --quiet \
    --manifest-path "$ref/src/Cargo.toml"
fi
cargo build --release --locked --quiet
new=${CARGO_TARGET_DIR:-target}/release/aoitap

# Instructions of one command: callgrind's total, read from its summary.
count() { # binary command
  local out="$WORK/callgrind.out"
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$1" "$2" -q --continue-on-error "$stream" >/dev/null 2>"$WORK/callgrind.err" || true
  local n
  n=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/callgrind.err")
  [ -n "$n" ] || { echo "reference.sh: no count from callgrind for $1 $2 ($WORK/callgrind.err)" >&2; exit 1; }
  echo "$n"
}

# A command the reference does not have (upgrade came later) is counted
# for this tree alone; its ratio to verify is what is held.
knows() { # binary command
  "$1" "$2" --help >/dev/null 2>&1
}

printf '| command | %s | %s | ratio |\n|---|---|---|---|\n' "$REF" "$(git rev-parse --short HEAD)"
declare -A now
for c in $COMMANDS; do
  now[$c]=$(count "$new" "$c")
  if knows "$ref/target/release/aoitap" "$c"; then
    old=$(count "$ref/target/release/aoitap" "$c")
    awk -v c="$c" -v o="$old" -v n="${now[$c]}" \
      'BEGIN { printf "| %s | %.1fM | %.1fM | %.3fx |\n", c, o / 1e6, n / 1e6, n / o }'
  else
    awk -v c="$c" -v n="${now[$c]}" -v v="${now[verify]:-0}" \
      'BEGIN { printf "| %s | (none) | %.1fM | %s |\n", c, n / 1e6, (v > 0 ? sprintf("%.3fx verify", n / v) : "") }'
  fi
done
