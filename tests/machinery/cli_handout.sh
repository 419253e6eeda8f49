#!/usr/bin/env bash
# The teacher's handout (scripts/grade.sh --handout; docs/graded-tasks.md, "The handout"):
# writes one into WORKDIR and checks that the answers are not in it, without building it.
#
#   tests/machinery/cli_handout.sh WORKDIR
#
# For every task of students/tasks.txt: no code line of our implementation (field 2 of the table,
# read from this repository) is left in the handout's copy of that file, which compiles the
# student's file instead; the content between the docs' answer markers is gone, and so are the
# markers, in docs, notebooks and code comments alike; the answer key docs/exercises-answers.md,
# tests/grader/wrong/ and tests/grader/answer_ideas.txt are left out and no link points at them; the fast twins run the student's function; no file holds an answer in
# another form (tests/grader/handout_leaks.py); the notebooks are still JSON; in the handout,
# --reference and --check refuse with one line; a non-empty folder is refused.
set -u
W=$(realpath -m "$1")
rm -rf "$W" && mkdir -p "$W" || exit 1
cd "$(dirname "$0")/../.." || exit 1
H="$W/handout"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

scripts/grade.sh --handout "$H" > "$W/handout.log" 2>&1 || { cat "$W/handout.log"; fail "grade.sh --handout exited $?"; }
mapfile -t tasks < <(awk -F' [|] ' '/^[a-z_]+ [|] / { print $1 }' students/tasks.txt)
[ ${#tasks[@]} -ge 6 ] || fail "read ${#tasks[@]} tasks from students/tasks.txt"

for task in "${tasks[@]}"; do
  ours=$(awk -F' [|] ' -v t="$task" '$1 == t { print $2 }' students/tasks.txt)
  [ -f "$H/$ours" ] || { fail "$task: $ours is missing from the handout (the build needs it)"; continue; }
  grep -qF "students/tasks/$task.cpp\"" "$H/$ours" || fail "$task: $H/$ours does not compile the student's file"
  # Our code lines: not comments, includes, braces or namespace lines; at least 12 characters.
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    grep -qxF -- "$line" "$H/$ours" && fail "$task: the handout's $ours still holds our line: $line"
  done < <(grep -vE '^\s*(//|#include|namespace|}|$)' "$ours" | awk 'length($0) >= 12')
  [ "$n" -gt 0 ] || fail "$task: found no code line in $ours to look for (the check would see nothing)"
  grep -qx "$task" "$H/students/handout.txt" || fail "$task: not listed in the handout's students/handout.txt"
done

# The docs' answer passages: every marked passage of this repository is absent from the handout.
BEGIN='<!-- answer:begin( [a-z_]+)? -->'
markers=0
while IFS= read -r doc; do
  while IFS= read -r line; do
    markers=$((markers + 1))
    grep -qF -- "$line" "$H/$doc" && fail "$doc: the handout keeps the answer passage line: $line"
  done < <(perl -0ne 'while (/<!-- answer:begin ?[a-z_]* -->(.*?)<!-- answer:end -->/gs) {
             for (split /\n/, $1) { s/^\s+|\s+$//g; print "$_\n" if length($_) >= 12 } }' "$doc")
  grep -qE "$BEGIN" "$H/$doc" && fail "$doc: the handout keeps an answer marker"
done < <(git ls-files -z | xargs -0 grep -lE "$BEGIN" 2>/dev/null)
[ "$markers" -gt 0 ] || fail "found no answer passage in docs/ (docs/rope.md §6 marks one)"
# A passage marked in a code comment is cut too (src/position/rope.hpp marks one), and the
# comment stays a comment: the handout still compiles it (not built here).
grep -qF "answer:begin rope_backward" src/position/rope.hpp \
  && ! grep -qF "answer:begin" "$H/src/position/rope.hpp" \
  && grep -qE '^// .*[*][(]Left out of the handout: an answer of graded task rope_backward[.][)][*]$' "$H/src/position/rope.hpp" \
  || fail "src/position/rope.hpp's marked comment is not cut to a note inside the comment"

# No file of the handout holds an answer in another form: our statements elsewhere (a fast
# twin), our call by its shape or in words, a copy of a marked passage (tests/grader/handout_leaks.py).
python3 tests/grader/handout_leaks.py "$H" > "$W/leaks.log" 2>&1 || { cat "$W/leaks.log"; fail "the handout leaks answers"; }
grep -q "^handout_leaks: PASS" "$W/leaks.log" || fail "handout_leaks.py said no PASS: $(tail -n 1 "$W/leaks.log")"
read_line=$(sed -n 's/^handout_leaks: read /read /p' "$W/leaks.log")
[ -n "$read_line" ] || fail "handout_leaks.py did not say what it read"
# The fast twins run the student's function: RoPE's SIMD rows call rope_kernel, AdamW's calls step().
grep -q "rope_rows_handout(x, T, D, r, cos2, sin2, sin_sign, true)" "$H/src/fast/simd_kernels.hpp" \
  && grep -q "rope_kernel(x, x, 1, T, D, r, RopePairing::half" "$H/src/fast/rope_rows_handout.cpp" \
  || fail "the handout's src/fast/simd_kernels.hpp still holds RoPE's rows (rope_forward's fast twin)"
grep -q "step(lr);" "$H/src/fast/adamw_vectorized.cpp" && ! grep -q "adamw_update" "$H/src/fast/adamw_vectorized.cpp" \
  || fail "the handout's src/fast/adamw_vectorized.cpp still holds the update (adamw_step's fast twin)"
# Every notebook is still JSON (a cut passage stays inside one string), and no relative link of
# a markdown file points at a file the handout lacks (the answer key is left out).
python3 - "$H" > "$W/links.log" 2>&1 <<'PY' || { cat "$W/links.log"; fail "a notebook is broken or a link is dead in the handout"; }
import json, os, re, sys
handout, bad = sys.argv[1], 0
for root, _, files in os.walk(handout):
    for name in files:
        path = os.path.join(root, name)
        if name.endswith(".ipynb"):
            try:
                json.load(open(path, encoding="utf-8"))
            except ValueError as e:
                print(f"{os.path.relpath(path, handout)}: not JSON: {e}"); bad += 1
        elif name.endswith(".md"):
            text = open(path, encoding="utf-8").read()
            for m in re.finditer(r"\]\(([^)\s]+)\)", text):
                target = m.group(1).split("#")[0]
                if target and not re.match(r"^[a-z]+:", target) and \
                        not os.path.exists(os.path.normpath(os.path.join(root, target))):
                    line = text.count("\n", 0, m.start()) + 1
                    print(f"{os.path.relpath(path, handout)}:{line}: dead link {target}"); bad += 1
sys.exit(1 if bad else 0)
PY

[ -e "$H/docs/exercises-answers.md" ] && fail "the answer key docs/exercises-answers.md is in the handout"
[ -e "$H/tests/grader/wrong" ] && fail "the wrong solutions tests/grader/wrong/ are in the handout"
[ -e "$H/tests/grader/answer_ideas.txt" ] && fail "the answers in words tests/grader/answer_ideas.txt are in the handout"
[ -f "$H/students/tasks/rope_forward.cpp" ] || fail "the handout has no students/tasks/rope_forward.cpp"

# In the handout, the grader refuses what needs our answers, with one line.
for args in "--reference rope_forward" "--check"; do
  # shellcheck disable=SC2086
  out=$(cd "$H" && scripts/grade.sh $args 2>&1); rc=$?
  [ "$rc" != 0 ] || fail "grade.sh $args in a handout exited 0"
  [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "this is a handout: the reference answers are not in it" \
    || fail "grade.sh $args in a handout said: $out"
done
# A folder with files in it is never overwritten.
mkdir -p "$W/full" && echo "mine" > "$W/full/notes.txt"
scripts/grade.sh --handout "$W/full" > /dev/null 2>&1 && fail "--handout wrote into a non-empty folder"
[ "$(cat "$W/full/notes.txt")" = mine ] && [ "$(ls "$W/full")" = notes.txt ] || fail "--handout touched a non-empty folder"

[ "$fails" = 0 ] && echo "cli_handout: PASS (${#tasks[@]} tasks without our code, $markers answer lines cut, no leak — $read_line — no dead link, refusals work)"
exit "$fails"
