#!/usr/bin/env bash
# Time is linear in input size, however long a line is (docs/contract.md §3.2): one
# 256 MiB line against 256 MiB of ordinary ~200-byte lines, in one run,
# and a 1 GiB line with a 2 GiB cap, which must finish.
#
# usage: benches/huge_line.sh    env: WORK=target/bench SHARED=../shared
#        GIB=0 skips the 1 GiB line (it writes a 1 GiB file)
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared}
WORK=${WORK:-target/bench}
mkdir -p "$WORK"
cargo build --release --quiet
aoitap=${CARGO_TARGET_DIR:-target}/release/aoitap
[ -x "$aoitap" ] || { echo "no binary at $aoitap" >&2; exit 1; }
ordinary="$WORK/stream-256M-200.jsonl"
[ -s "$ordinary" ] || python3 "$SHARED/bench/gen_aoi_stream.py" --bytes 256M --line-bytes 200 -o "$ordinary"
one_line() { # bytes path: meta, one hit whose snippet fills `bytes`, summary
  python3 - "$1" "$2" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
run = '"run":"HUGE"'
with open(path, "w") as f:
    f.write('{"type":"aoi:meta","aoi":{"seq":0,%s},"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1.0.0","command":"c"}\n' % run)
    f.write('{"type":"hit","aoi":{"seq":1,%s},"snippet":"' % run)
    chunk = "agent operable stream " * 4096
    left = n
    while left > 0:
        f.write(chunk[:left]); left -= len(chunk[:left])
    f.write('"}\n')
    f.write('{"type":"aoi:summary","aoi":{"seq":2,%s},"ok":true,"event_count":3,"count":1,"tool":"t","tool_version":"1","aoi_version":"1.0-alpha","schema_name":"s","schema_version":"1.0.0"}\n' % run)
PY
}
huge="$WORK/one-line-256M.jsonl"
[ -s "$huge" ] || one_line $((256 << 20)) "$huge"
cat "$ordinary" "$huge" > /dev/null
t() { /usr/bin/time -f '%e %M %x' "$@" 2>&1 >/dev/null | tail -1; }
read -r a ra xa < <(t "$aoitap" verify -q --continue-on-error "$ordinary")
read -r b rb xb < <(t "$aoitap" verify -q --max-line-bytes 512MiB "$huge")
echo "256 MiB of 200-byte lines: $a s, $ra KiB peak, exit $xa"
echo "one 256 MiB line:          $b s, $rb KiB peak, exit $xb"
awk -v a="$a" -v b="$b" 'BEGIN { printf "one line / ordinary lines: %.2fx\n", b / a }'
if [ "${GIB:-1}" != 0 ]; then
  giant="$WORK/one-line-1G.jsonl"
  [ -s "$giant" ] || one_line $((1 << 30)) "$giant"
  read -r c rc xc < <(t "$aoitap" verify -q --max-line-bytes 2GiB "$giant")
  echo "one 1 GiB line, 2 GiB cap:  $c s, $rc KiB peak, exit $xc"
fi
