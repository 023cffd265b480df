#!/usr/bin/env bash
# Past one machine (docs/contract.md §2.2): the guide's Spark recipe, in
# local[2] mode, against `aoitap verify -j 2 --output jsonl` over the same
# FILES transcripts on this machine's two cores, each followed by its
# reduce (`verify --multi-run` over the reports). Spark's cost is mostly
# its start (a JVM, a Python worker per executor): the ratio says how
# much work a cluster must be given before it pays. Medians of REPEAT
# rounds, the two in turn.
#
# usage: benches/spark.sh
# env:   FILES=300  REPEAT=5  WORK=target/bench
# needs: pyspark (PyPI) and Java; times ${CARGO_TARGET_DIR:-target}/release/aoitap
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
FILES=${FILES:-300}
REPEAT=${REPEAT:-5}
WORK=${WORK:-target/bench}
aoitap=$(realpath "${CARGO_TARGET_DIR:-target}/release/aoitap")
[ -x "$aoitap" ] || { echo "spark.sh: build first: cargo build --release" >&2; exit 1; }
python3 -c 'import pyspark' 2>/dev/null || { echo "spark.sh: needs pyspark (pip install pyspark)" >&2; exit 1; }

dir=$(realpath -m "$WORK/spark-$FILES")
rm -rf "$dir" && mkdir -p "$dir/t"
fixtures=(tests/fixtures/streams/ok-complete.jsonl tests/fixtures/streams/retryable-failure.jsonl
  tests/fixtures/streams/no-summary.jsonl tests/fixtures/profiles/codex-exec/success-tool-calls.jsonl)
for ((i = 0; i < FILES; i++)); do
  cp "${fixtures[i % ${#fixtures[@]}]}" "$dir/t/t$(printf %05d "$i").jsonl"
done
find "$dir/t" -name '*.jsonl' | sort > "$dir/list.txt"
# The recipe, as the guide writes it.
awk '/<!-- recipe: spark/ {f = 1; next} f && /^```python/ {p = 1; next} p && /^```/ {exit} p' \
  docs/guide.md > "$dir/verify_on_spark.py"
export PATH="${aoitap%/*}:$PATH" PYSPARK_SUBMIT_ARGS="--master local[2] pyspark-shell"

now() { date +%s%N; }
spark() {
  rm -rf "$dir/reports"
  (cd "$dir" && python3 verify_on_spark.py list.txt reports 2>/dev/null)
  cat "$dir"/reports/part-* | "$aoitap" verify -q --multi-run || true
}
local_j2() {
  xargs -d '\n' "$aoitap" verify -j 2 --output jsonl < "$dir/list.txt" > "$dir/local.jsonl" || true
  "$aoitap" verify -q --multi-run "$dir/local.jsonl" || true
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
s=() l=()
for ((r = 0; r < REPEAT; r++)); do
  t0=$(now); spark; t1=$(now); local_j2; t2=$(now)
  s+=($(((t1 - t0) / 1000000))) l+=($(((t2 - t1) / 1000000)))
done
ms=$(printf '%s\n' "${s[@]}" | median) ml=$(printf '%s\n' "${l[@]}" | median)
echo "| $FILES files | spark local[2] | verify -j 2 | ratio |"
echo "|---|---|---|---|"
echo "| median of $REPEAT | ${ms} ms | ${ml} ms | $(awk -v a="$ms" -v b="$ml" 'BEGIN {printf "%.1f", a / b}')x |"
