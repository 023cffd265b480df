#!/usr/bin/env bash
# Time aoitap against jq and cat on one generated stream, in one run, and
# print the ratios (DESIGN §7: ratios, not absolute times; machines are
# shared and noisy). Each command is run REPEAT times; the median counts.
# jq is slow, so it reads a smaller stream cut from the same generator
# (JQ_SIZE) and its time is scaled to SIZE by bytes.
#
# usage: benches/compare.sh      (256 MiB reference stream, 200-byte lines)
# env:   SIZE=256M  JQ_SIZE=64M  LINE_BYTES=200  REPEAT=5  SHARED=../shared
#        WORK=target/bench  SKIP_JQ=1
#
# The generator's aoi:error events are item-scope, so the stream exits 1
# unless --continue-on-error (shared/bench/README.md): every aoitap command
# here takes that flag, so the success path is what is timed.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
SIZE=${SIZE:-256M}
JQ_SIZE=${JQ_SIZE:-64M}
LINE_BYTES=${LINE_BYTES:-200}
REPEAT=${REPEAT:-5}
SHARED=${SHARED:-../shared}
WORK=${WORK:-target/bench}
[ -f "$SHARED/bench/gen_aoi_stream.py" ] || {
  echo "compare.sh: no $SHARED/bench/gen_aoi_stream.py: set SHARED to the shared directory" >&2
  exit 1
}
mkdir -p "$WORK"
gen() { # size -> path
  local f="$WORK/stream-$1-$LINE_BYTES.jsonl"
  if [ ! -s "$f" ]; then
    python3 "$SHARED/bench/gen_aoi_stream.py" --bytes "$1" --line-bytes "$LINE_BYTES" -o "$f"
  fi
  echo "$f"
}
stream=$(gen "$SIZE")
jq_stream=$(gen "$JQ_SIZE")
cargo build --release --quiet
aoitap=${CARGO_TARGET_DIR:-target}/release/aoitap
[ -x "$aoitap" ] || { echo "no binary at $aoitap" >&2; exit 1; }
bytes=$(stat -L -c %s "$stream")
jq_bytes=$(stat -L -c %s "$jq_stream")
cat "$stream" "$jq_stream" >/dev/null # into the page cache

# median wall seconds and max peak RSS (KiB) of REPEAT runs of "$@"
measure() {
  local walls=() peak=0 out tf="$WORK/time.out"
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -o "$tf" -f '%e %M' "$@" >/dev/null 2>&1 || true
    out=$(tail -1 "$tf")
    walls+=("${out% *}")
    [ "${out#* }" -gt "$peak" ] && peak=${out#* }
  done
  printf '%s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (REPEAT + 1) / 2 ))p")" "$peak"
}

declare -A wall rss
run() { # name (one word) command...
  local name=$1 w r; shift
  read -r w r < <(measure "$@")
  wall[$name]=$w
  rss[$name]=$r
  printf '%-12s %8.3f s %10.0f MB/s %8d KiB peak\n' "$name" "${wall[$name]}" \
    "$(awk -v b="${RUN_BYTES:-$bytes}" -v s="${wall[$name]}" 'BEGIN { print (s > 0 ? b / s / 1e6 : 0) }')" "${rss[$name]}"
}

ok=--continue-on-error
echo "stream: $stream ($bytes bytes), median of $REPEAT"
run cat cat "$stream"
run catcat sh -c "cat '$stream' | cat"
run verify "$aoitap" verify -q $ok "$stream"
run schema "$aoitap" verify -q $ok --schema benches/search.schema.json "$stream"
run summarize "$aoitap" summarize -q $ok "$stream"
run reconcile "$aoitap" reconcile -q $ok "$stream"
run relay sh -c "cat '$stream' | '$aoitap' verify --relay -q $ok | cat > /dev/null"
run redact sh -c "cat '$stream' | '$aoitap' verify --relay --redact -q $ok | cat > /dev/null"
run strip sh -c "'$aoitap' strip-envelope -q $ok '$stream' > /dev/null"
if [ -z "${SKIP_JQ:-}" ]; then
  # jq on the smaller stream, scaled to the size of the large one.
  scale() { awk -v s="$1" -v a="$bytes" -v b="$jq_bytes" 'BEGIN { printf "%.3f", s * a / b }'; }
  RUN_BYTES=$jq_bytes REPEAT=1 run jq jq -n -c -f "$SHARED/bench/verify.jq" "$jq_stream"
  wall[jq]=$(scale "${wall[jq]}")
  RUN_BYTES=$jq_bytes REPEAT=1 run jqstrip sh -c "jq -c 'select(.type|startswith(\"aoi:\")|not) | del(.aoi)' '$jq_stream' > /dev/null"
  wall[jqstrip]=$(scale "${wall[jqstrip]}")
  echo "(jq rows: $jq_stream, $jq_bytes bytes; times scaled to $bytes bytes below)"
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo
echo "| ratio | measured | target |"
echo "|---|---|---|"
if [ -n "${wall[jq]:-}" ]; then
  echo "| jq verify.jq / verify | $(ratio "${wall[jq]}" "${wall[verify]}")x | >= 120x |"
  echo "| jq verify.jq / verify --schema | $(ratio "${wall[jq]}" "${wall[schema]}")x | >= 10x |"
  echo "| jq strip / strip-envelope | $(ratio "${wall[jqstrip]}" "${wall[strip]}")x | >= 20x |"
fi
echo "| summarize / verify | $(ratio "${wall[summarize]}" "${wall[verify]}")x | <= 1.3x |"
echo "| reconcile / verify | $(ratio "${wall[reconcile]}" "${wall[verify]}")x | <= 1.3x |"
echo "| cat \| verify --relay \| cat / cat \| cat | $(ratio "${wall[relay]}" "${wall[catcat]}")x | <= 1.3x |"
echo "| cat \| verify --relay --redact \| cat / cat \| cat | $(ratio "${wall[redact]}" "${wall[catcat]}")x | <= 1.5x |"
echo "| verify peak RSS | ${rss[verify]} KiB | < 32768 KiB |"
echo "| summarize, reconcile peak RSS | ${rss[summarize]}, ${rss[reconcile]} KiB | < 32768 KiB |"
