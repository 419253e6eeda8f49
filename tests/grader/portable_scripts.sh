#!/usr/bin/env bash
# The handout's shell scripts run on every laptop: POSIX sh with POSIX options only — no bash
# (a Mac has 3.2, busybox has none), no GNU-only tool or option. Greps each for what breaks
# there and fails naming the file, the line and what it uses.
#
#   tests/grader/portable_scripts.sh [FILE...]     default: the handout's scripts in this tree
set -u
cd "$(dirname "$0")/../.." || exit 1
[ $# -gt 0 ] || set -- scripts/grade.sh students/handout/install.sh
# "what | extended regular expression", one a line
RULES='a bash shebang | ^#!.*bash
declare -A (bash 4 arrays) | declare[[:space:]]+-[a-zA-Z]*A
mapfile or readarray (bash 4) | (^|[^a-z_])(mapfile|readarray)[[:space:]]
${x,,} or ${x^^} (bash 4 case) | \$\{[a-zA-Z_][a-zA-Z_0-9]*(,,|\^\^)
[[ ]] (bash) | (^|[[:space:]])\[\[[[:space:]]
arrays (bash) | [a-zA-Z_][a-zA-Z_0-9]*=\(|\$\{[a-zA-Z_][a-zA-Z_0-9]*\[
<<< or <( ) (bash) | <<<|<\(
set -o pipefail (bash, newer POSIX shells only) | pipefail
local (not POSIX) | (^|[;[:space:]])local[[:space:]]
GNU timeout | (^|[^a-zA-Z_.-])g?timeout[[:space:]]
readlink -f (GNU) | readlink[[:space:]]+-f
realpath -m (GNU) | realpath[[:space:]]+-m
sed -i (GNU and BSD differ) | sed[[:space:]]+(-[a-zA-Z]*[[:space:]]+)*-i
stat -c (GNU) | stat[[:space:]]+-c
nproc (GNU) | (^|[^a-zA-Z_])nproc([^a-zA-Z_]|$)
grep -P (GNU) | grep[[:space:]]+(-[a-zA-Z]*[[:space:]]+)*-[a-zA-Z]*P
echo -e (not POSIX) | echo[[:space:]]+-e
$"..." or function (bash) | (^|[[:space:]])function[[:space:]]'
fails=0
for f in "$@"; do
  [ -f "$f" ] || { echo "FAIL: $f does not exist"; fails=$((fails + 1)); continue; }
  while IFS= read -r rule; do
    what=${rule%% | *}; re=${rule#* | }
    # comments are not run; the shebang line is checked as it is
    hits=$(grep -nE -- "$re" "$f" | grep -vE '^[0-9]+:[[:space:]]*#[^!]' | grep -vE '^[0-9]+:.*#[[:space:]]*shellcheck' || true)
    hits=$(printf '%s\n' "$hits" | awk -F: '$1 == 1 || $0 !~ /^[0-9]+:[[:space:]]*#/' | grep . || true)
    [ -z "$hits" ] || { echo "FAIL: $f uses $what: $(printf '%s' "$hits" | head -n 3 | tr '\n' ' ')"; fails=$((fails + 1)); }
  done <<< "$RULES"
  if command -v busybox > /dev/null; then
    busybox sh -n "$f" 2> "/tmp/portable.$$" || { echo "FAIL: busybox sh cannot parse $f: $(head -n 2 "/tmp/portable.$$")"; fails=$((fails + 1)); }
    rm -f "/tmp/portable.$$"
  fi
done
[ "$fails" = 0 ] && echo "PASS: $# scripts use POSIX sh and POSIX options only"
exit "$fails"
