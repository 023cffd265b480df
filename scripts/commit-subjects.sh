#!/usr/bin/env bash
# Commit subjects as CONTRIBUTING.md asks: at most 72 characters, in the
# form `area: what changed` (an area is a word or a path, or several
# joined by ", "). Checks the commits after BASE; by default those after
# 526a973, the last commit before the rule held.
#
#   scripts/commit-subjects.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-526a973}
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  # A shallow clone without BASE: the newest commit is what can be read.
  echo "commit-subjects: $base is not in this clone; checking HEAD alone" >&2
  range=(-1 HEAD)
else
  range=("$base..HEAD")
fi
area='[a-z0-9][a-z0-9_./-]*'
form="^$area(, $area)*: [^ ]"
bad=0 n=0
while IFS= read -r line; do
  n=$((n + 1))
  hash=${line%% *} subject=${line#* }
  if [ ${#subject} -gt 72 ]; then
    echo "$hash: the subject is ${#subject} characters, over 72: $subject"
    bad=1
  fi
  if ! [[ $subject =~ $form ]]; then
    echo "$hash: the subject is not \`area: what changed\`: $subject"
    bad=1
  fi
done < <(git log --no-merges --format='%h %s' "${range[@]}")
[ $bad -eq 0 ] && echo "commit-subjects: $n subjects, each at most 72 characters, as \`area: what changed\`"
exit $bad
