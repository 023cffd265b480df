#!/usr/bin/env bash
# Time aoitap against jq and cat on one generated stream, in one run, and
# print the ratios (docs/contract.md §8.1: ratios, not absolute times; machines are
# shared and noisy). Each command is run REPEAT times, round-robin; the
# median counts.
# jq is slow, so it reads a smaller stream cut from the same generator
# (JQ_SIZE) and its time is scaled to SIZE by bytes.
#
# usage: benches/compare.sh      (256 MiB reference stream, 200-byte lines)
# env:   SIZE=256M  JQ_SIZE=64M  LINE_BYTES=200  REPEAT=5  JQ_REPEAT=3
#        SHARED=../shared  WORK=target/bench  SKIP_JQ=1
#        BASELINE=path/to/an/older/aoitap: its verify, relay and summarize
#        run in the same rounds, and the table gives new/old ratios (a
#        refactor's "no slower" is measured side by side, never remembered)
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

# The commands, timed round-robin: every command runs once per round, so
# a change in the machine's load falls on all of them alike, rather than
# on whichever happened to be running then. Wall time is taken with
# microseconds (EPOCHREALTIME: /usr/bin/time's %e has 10 ms steps, 4% of
# a verify run); /usr/bin/time gives the peak RSS.
names=() cmds=()
add() { names+=("$1"); cmds+=("$2"); } # name (one word), sh command
declare -A walls peaks wall rss
once() { # index
  local tf="$WORK/time.out" t0 t1 r
  t0=$EPOCHREALTIME
  /usr/bin/time -o "$tf" -f '%M' sh -c "${cmds[$1]}" >/dev/null 2>&1 || true
  t1=$EPOCHREALTIME
  r=$(tail -1 "$tf")
  walls[${names[$1]}]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
  [ "$r" -gt "${peaks[${names[$1]}]:-0}" ] && peaks[${names[$1]}]=$r
  return 0
}
median() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
report() { # name bytes
  wall[$1]=$(median "${walls[$1]}")
  rss[$1]=${peaks[$1]}
  printf '%-12s %8.3f s %10.0f MB/s %8d KiB peak\n' "$1" "${wall[$1]}" \
    "$(awk -v b="$2" -v s="${wall[$1]}" 'BEGIN { print (s > 0 ? b / s / 1e6 : 0) }')" "${rss[$1]}"
}

ok=--continue-on-error
add cat "exec cat '$stream'"
add catcat "cat '$stream' | cat"
add verify "exec '$aoitap' verify -q $ok '$stream'"
add schema "exec '$aoitap' verify -q $ok --schema benches/search.schema.json '$stream'"
add summarize "exec '$aoitap' summarize -q $ok '$stream'"
add reconcile "exec '$aoitap' reconcile -q $ok '$stream'"
add relay "cat '$stream' | '$aoitap' verify --relay -q $ok | cat > /dev/null"
add redact "cat '$stream' | '$aoitap' verify --relay --redact -q $ok | cat > /dev/null"
add strip "exec '$aoitap' strip-envelope -q $ok '$stream' > /dev/null"
add upgrade "exec '$aoitap' upgrade -q $ok '$stream' > /dev/null"
if [ -n "${BASELINE:-}" ]; then
  base=$(realpath "$BASELINE")
  add old_verify "exec '$base' verify -q $ok '$stream'"
  add old_relay "cat '$stream' | '$base' verify --relay -q $ok | cat > /dev/null"
  add old_summarize "exec '$base' summarize -q $ok '$stream'"
fi
echo "stream: $stream ($bytes bytes), median of $REPEAT rounds"
n=${#names[@]}
JQ_REPEAT=${JQ_REPEAT:-3}
if [ -z "${SKIP_JQ:-}" ]; then
  # jq reads the smaller stream (it takes ~35 s per 256 MiB); its median
  # is scaled to the size of the large one by bytes. It runs in the first
  # JQ_REPEAT rounds, beside the commands it is compared with.
  add jq "exec jq -n -c -f '$SHARED/bench/verify.jq' '$jq_stream'"
  add jqstrip "exec jq -c 'select(.type|startswith(\"aoi:\")|not) | del(.aoi)' '$jq_stream' > /dev/null"
fi
for round in $(seq "$REPEAT"); do
  for i in "${!names[@]}"; do
    [ "$i" -ge "$n" ] && [ "$round" -gt "$JQ_REPEAT" ] && continue
    once "$i"
  done
done
for name in "${names[@]:0:n}"; do report "$name" "$bytes"; done
if [ -z "${SKIP_JQ:-}" ]; then
  scale() { awk -v s="$1" -v a="$bytes" -v b="$jq_bytes" 'BEGIN { printf "%.3f", s * a / b }'; }
  for name in jq jqstrip; do
    report "$name" "$jq_bytes"
    wall[$name]=$(scale "${wall[$name]}")
  done
  echo "(jq rows: $jq_stream, $jq_bytes bytes, median of $JQ_REPEAT; times scaled to $bytes bytes below)"
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
echo "| upgrade / verify | $(ratio "${wall[upgrade]}" "${wall[verify]}")x | <= 1.3x |"
echo "| verify peak RSS | ${rss[verify]} KiB | < 32768 KiB |"
echo "| upgrade peak RSS | ${rss[upgrade]} KiB | < 32768 KiB |"
echo "| summarize, reconcile peak RSS | ${rss[summarize]}, ${rss[reconcile]} KiB | < 32768 KiB |"
if [ -n "${BASELINE:-}" ]; then
  echo "| verify / baseline verify | $(ratio "${wall[verify]}" "${wall[old_verify]}")x | <= 1.03x |"
  echo "| relay / baseline relay | $(ratio "${wall[relay]}" "${wall[old_relay]}")x | <= 1.03x |"
  echo "| summarize / baseline summarize | $(ratio "${wall[summarize]}" "${wall[old_summarize]}")x | <= 1.03x |"
fi
