#!/usr/bin/env bash
# Time aoitap against jq and cat on one generated stream, in one run, and
# print the ratios (DESIGN §7: ratios, not absolute times; machines are
# shared and noisy). Each command is run REPEAT times; the median counts.
#
# usage: benches/compare.sh            (1 GiB reference stream, 200-byte lines)
# env:   SIZE=256M  LINE_BYTES=200  REPEAT=3  SHARED=../shared  WORK=target/bench
#        SKIP_JQ=1  (jq takes ~90 s on 1 GiB)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-1G}
LINE_BYTES=${LINE_BYTES:-200}
REPEAT=${REPEAT:-3}
SHARED=${SHARED:-../shared}
WORK=${WORK:-target/bench}
mkdir -p "$WORK"
stream="$WORK/stream-$SIZE-$LINE_BYTES.jsonl"
if [ ! -s "$stream" ]; then
  python3 "$SHARED/bench/gen_aoi_stream.py" --bytes "$SIZE" --line-bytes "$LINE_BYTES" -o "$stream"
fi
cargo build --release --quiet
aoitap=target/release/aoitap
bytes=$(stat -L -c %s "$stream")
cat "$stream" >/dev/null # into the page cache

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
  printf '%-22s %8.2f s %10.0f MB/s %8d KiB peak\n' "$name" "${wall[$name]}" \
    "$(awk -v b="$bytes" -v s="${wall[$name]}" 'BEGIN { print (s > 0 ? b / s / 1e6 : 0) }')" "${rss[$name]}"
}

echo "stream: $stream ($bytes bytes), median of $REPEAT"
run cat cat "$stream"
run catcat sh -c "cat '$stream' | cat"
run verify "$aoitap" verify -q "$stream"
run relay sh -c "'$aoitap' verify --relay -q < '$stream' > /dev/null"
run relaycat sh -c "cat '$stream' | '$aoitap' verify --relay -q | cat > /dev/null"
run strip sh -c "'$aoitap' strip-envelope -q '$stream' > /dev/null"
if [ -z "${SKIP_JQ:-}" ]; then
  REPEAT=1 run jq jq -n -c -f "$SHARED/bench/verify.jq" "$stream"
  REPEAT=1 run jqstrip sh -c "jq -c 'select(.type|startswith(\"aoi:\")|not) | del(.aoi)' '$stream' > /dev/null"
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }
echo
if [ -n "${wall[jq]:-}" ]; then
  echo "verify is $(ratio "${wall[jq]}" "${wall[verify]}")x faster than jq (target >= 40x)"
fi
if [ -n "${wall[jqstrip]:-}" ]; then
  echo "strip-envelope is $(ratio "${wall[jqstrip]}" "${wall[strip]}")x faster than jq (target >= 20x)"
fi
echo "verify takes $(ratio "${wall[verify]}" "${wall[cat]}")x the time of cat"
echo "verify --relay > /dev/null takes $(ratio "${wall[relay]}" "${wall[catcat]}")x the time of cat | cat (target <= 1.5x)"
echo "cat | verify --relay | cat takes $(ratio "${wall[relaycat]}" "${wall[catcat]}")x the time of cat | cat"
echo "verify peak RSS: ${rss[verify]} KiB (target < 32768)"
