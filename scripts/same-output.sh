#!/usr/bin/env bash
# Byte-for-byte: does NEW write what OLD wrote? Every command, format and
# the flags that change output, over the sample streams and the test
# fixtures: stdout, stderr, exit status, and split-by-run's files. A
# refactor that means to change no behaviour runs this against the binary
# it started from.
#
#   scripts/same-output.sh OLD_BINARY NEW_BINARY [STREAM_DIR...]
set -uo pipefail

old=$(realpath "$1") new=$(realpath "$2")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
dirs=()
for d in "$@"; do dirs+=("$(realpath "$d")"); done
[ ${#dirs[@]} -eq 0 ] && dirs=("$root/tests/fixtures/streams" "$root/tests/fixtures/secrets")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Both binaries under one name: help and messages name argv[0].
mkdir -p "$work/old" "$work/new"
ln -s "$old" "$work/old/aoitap"
ln -s "$new" "$work/new/aoitap"

cases=0 differ=0
# run SIDE ARGS...: the command's stdout, stderr and status in $work/SIDE.
run() {
    local side=$1
    shift
    rm -rf "$work/$side.dir"
    (cd "$work" && "$work/$side/aoitap" "$@" >"$work/$side.out" 2>"$work/$side.err" </dev/null
     echo $? >"$work/$side.rc")
    if [ -d "$work/$side.dir" ]; then
        (cd "$work/$side.dir" && find . -type f | sort | xargs -r cat) >>"$work/$side.out"
        (cd "$work/$side.dir" && find . -type f | sort) >>"$work/$side.out"
    fi
}
check() {
    cases=$((cases + 1))
    local a=() b=()
    for x in "$@"; do a+=("${x//@DIR@/old.dir}"); b+=("${x//@DIR@/new.dir}"); done
    run old "${a[@]}"
    run new "${b[@]}"
    # The directory's name, aoitap's own run ids (ULIDs) and times (in
    # seconds, or JUnit's `time` and `timestamp`) may differ; nothing
    # else.
    sed -i 's/new\.dir/old.dir/g' "$work/new.out" "$work/new.err"
    sed -i -E 's/\b[0-9A-HJKMNP-TV-Z]{26}\b/ULID/g; s/[0-9]+(\.[0-9]+)? ?m?s\b/T s/g; s/"(elapsed|duration|retry_in)_ms":[0-9]+/"\1_ms":T/g; s/ (time|timestamp)="[^"]*"/ \1="T"/g' \
        "$work"/{old,new}.{out,err}
    for part in out err rc; do
        if ! cmp -s "$work/old.$part" "$work/new.$part"; then
            differ=$((differ + 1))
            echo "DIFFERS ($part): aoitap $*"
            diff <(head -c 4000 "$work/old.$part") <(head -c 4000 "$work/new.$part") | head -20
            return
        fi
    done
}

# Without input: the documents, help and usage errors.
check schema
check schema --output json
check capabilities
check capabilities --output json
check --schema
check --capabilities
check --help
check --version
check completions bash
check verify --bogus
check verify --output jsonl --bogus
check run --output tap --bogus
check summarize --output tap
for c in verify strip-envelope split-by-run summarize reconcile run schema capabilities completions; do
    check "$c" --help
    check "$c" -h
done
check verify /nonexistent
check verify --output jsonl /nonexistent

for dir in "${dirs[@]}"; do
    for f in "$dir"/*.jsonl; do
        for m in "" --multi-run; do
            for o in human jsonl tap junit sarif github; do
                check verify $m --output "$o" "$f"
                check verify $m --output "$o" --color always "$f"
                check verify $m --output "$o" --relay "$f"
                check verify $m --output "$o" --strict --unbounded --accept-partial "$f"
                check verify $m --output "$o" --redact --relay "$f"
            done
            for o in human jsonl tap junit github; do
                check run $m --output "$o" -- cat "$f"
            done
            for o in human jsonl; do
                check filter $m --output "$o" '.type' "$f"
                check filter $m --output "$o" 'select(.aoi.seq > 1) | error' "$f"
            done
            check verify $m -q "$f"
            check verify $m --allow seq.gap --deny summary.event-count-missing "$f"
            for o in human jsonl; do
                check strip-envelope $m --output "$o" "$f"
                check strip-envelope $m --output "$o" --keep-framework --redact "$f"
                check split-by-run $m --output "$o" --dir @DIR@ "$f"
                check reconcile $m --output "$o" "$f"
                check reconcile $m --output "$o" --against "$f" "$f"
            done
            for o in human json jsonl html; do
                check summarize $m --output "$o" "$f"
                check summarize $m --output "$o" --color always "$f"
            done
            check reconcile $m --output html "$f"
            for p in aoi aoi-0.2 afdata ndjson; do
                check verify $m --protocol "$p" --output jsonl "$f"
            done
        done
    done
done
# Many files at once: a directory operand, one worker and two.
for dir in "${dirs[@]}"; do
    for o in human jsonl tap junit sarif github; do
        check verify --output "$o" -j 1 "$dir"
        check verify --output "$o" -j 2 "$dir"
    done
    check summarize "$dir"
done
# What commands say of their own: run's attempts, retried (TAP's held
# points, `# TODO retried`) and timed out, and lint's checks, conforming
# and with a fault whose stderr a check quotes.
producers="$root/tests/fixtures/producers"
ln -s "$root/tests/fixtures/lint/producer.py" "$work/fake"
ln -s "$root/tests/fixtures/lint/producer.py" "$work/fake-traceback"
for o in human jsonl tap junit github; do
    check run --retries 2 --backoff 10ms --output "$o" -- \
        sh -c "mkdir -p @DIR@ && exec sh $producers/flaky.sh 2 @DIR@/n"
    check run --timeout 200ms --kill-after 100ms --output "$o" -- sh "$producers/hang.sh" 5
    check lint --output "$o" -- "$work/fake" search q --output jsonl
    check lint --output "$o" -- "$work/fake-traceback" search q --output jsonl
done
# The samples' own arguments, as expected.tsv gives them.
for dir in "${dirs[@]}"; do
    [ -f "$dir/expected.tsv" ] || continue
    while IFS=$'\t' read -r file args _; do
        case $file in '#'*|'') continue ;; esac
        # shellcheck disable=SC2086
        check verify $args --output jsonl "$dir/$file"
        # shellcheck disable=SC2086
        check summarize $args "$dir/$file"
    done <"$dir/expected.tsv"
done
echo "$cases cases, $differ differ"
[ "$differ" -eq 0 ]
