#!/usr/bin/env bash
# The teacher's handout (scripts/grade.sh --handout; docs/graded-tasks.md, "The handout"):
# writes one into WORKDIR and checks that the answers are not in it, without building it.
#
#   tests/machinery/cli_handout.sh WORKDIR
#
# The handout is a git repository of its own (one commit, a clean tree); it holds of src/ and
# tests/ exactly the files of students/lesson_files.txt, those that held a graded region cut (each task's
# function lives only in its students/tasks/ stub); its own README, install script and container
# files are at its top, and the container runs the install script's package step; the content
# between the docs' answer markers is gone, and so are the markers, in docs and code comments
# alike; the answer key, tests/grader/wrong/ and tests/grader/answer_ideas.txt are left out and
# no link points at a file the handout lacks; no file holds an answer in another form
# (tests/grader/handout_leaks.py), and the check reports each leak of issue 64 planted in a
# copy; every file the lesson build compiles finds its headers in
# the handout (the preprocessor, no compile); in the handout, --reference, --check and
# --handout refuse with one line; a non-empty folder is refused; a handout of some tasks gives
# the others as written.
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

# A git repository of its own, one commit, nothing left uncommitted.
[ "$(git -C "$H" rev-list --count HEAD 2>/dev/null)" = 1 ] || fail "the handout is not a git repository with one commit"
[ -z "$(git -C "$H" status --porcelain 2>&1)" ] || fail "the handout's tree is not clean: $(git -C "$H" status --porcelain | head -3)"
# Of src/ and tests/, exactly the files of students/lesson_files.txt.
want=$(grep -v '^#' students/lesson_files.txt | grep -E '^(src|tests)/' | sort)
have=$(cd "$H" && find src tests -type f | sort)
[ "$want" = "$have" ] || fail "the handout's src/ and tests/ differ from students/lesson_files.txt: $(diff <(echo "$want") <(echo "$have") | head -5 | tr '\n' ' ')"
for f in README.md install.sh .devcontainer/Dockerfile .devcontainer/devcontainer.json scripts/grade.sh students/CMakeLists.txt; do
  [ -f "$H/$f" ] || fail "the handout has no $f"
done
grep -q 'install.sh --packages' "$H/.devcontainer/Dockerfile" || fail "the container does not run ./install.sh --packages"
grep -q '"postCreateCommand": "./install.sh"' "$H/.devcontainer/devcontainer.json" || fail "the devcontainer does not run ./install.sh"
for task in "${tasks[@]}"; do
  host=$(awk -F' [|] ' -v t="$task" '$1 == t { print $2 }' students/tasks.txt)
  ours="$W/ours.$task.cpp"  # our answer: the task's marked region of $host
  cmake -DMODE=ours -DTASK="$task" -DIN="$host" -DOUT="$ours" -P students/graded_region.cmake > /dev/null \
    || fail "$task: $host holds no graded region of it"
  grep -q "graded:begin" "$H/$host" && fail "$task: the handout's $host keeps a graded region"
  grep -q "^// Graded task $task: students/tasks/$task.cpp holds it" "$H/$host" \
    || fail "$task: the handout's $host does not say where the task's code went"
  cmp -s "students/tasks/$task.cpp" "$H/students/tasks/$task.cpp" || fail "$task: the handout's stub differs from students/tasks/$task.cpp"
  # Our code lines (not comments, includes, braces or namespace lines; at least 12 characters;
  # found in no other file of the course but the wrong solutions, which are not handed out, nor
  # in $host outside the regions) are nowhere.
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    grep -rqxF --exclude-dir=.git -- "$line" "$H" && fail "$task: the handout holds our line: $line"
  done < <(grep -vE '^\s*(//|#include|namespace|}|$)' "$ours" | awk 'length($0) >= 12' | grep -vxFf "students/tasks/$task.cpp" |
           while IFS= read -r l; do { git grep -hF -e "$l" -- ":!$host" ":!tests/grader/wrong" | grep -qxF -- "$l" ||
                 grep -qxF -- "$l" "$H/$host"; } || printf '%s\n' "$l"; done)
  [ "$n" -gt 0 ] || fail "$task: found no code line in $host's region to look for (the check would see nothing)"
  grep -qx "$task" "$H/students/handout.txt" || fail "$task: not listed in the handout's students/handout.txt"
done
# Every file the lesson build compiles finds what it includes in the handout.
if command -v g++ > /dev/null; then
  for f in $(cd "$H" && ls src/*/*.cpp tests/*/*.cpp tests/main.cpp students/tasks/*.cpp); do
    (cd "$H" && g++ -std=c++17 -E -MM -Isrc -Itests "$f" > /dev/null 2> "$W/mm.err") \
      || fail "$f does not preprocess in the handout: $(grep -m1 'fatal error' "$W/mm.err")"
  done
fi

# The docs' answer passages: every marked passage of this repository is absent from the handout.
BEGIN='<!-- answer:begin( [a-z_]+)? -->'
markers=0
while IFS= read -r doc; do
  while IFS= read -r line; do
    markers=$((markers + 1))
    grep -rqF --exclude-dir=.git -- "$line" "$H" && fail "$doc: the handout keeps the answer passage line: $line"
  done < <(perl -0ne 'while (/<!-- answer:begin ?[a-z_]* -->(.*?)<!-- answer:end -->/gs) {
             for (split /\n/, $1) { s/^\s+|\s+$//g; print "$_\n" if length($_) >= 12 } }' "$doc")
  [ -f "$H/$doc" ] && grep -qE "$BEGIN" "$H/$doc" && fail "$doc: the handout keeps an answer marker"
done < <(git ls-files -z | xargs -0 grep -lE "$BEGIN" 2>/dev/null)
[ "$markers" -gt 0 ] || fail "found no answer passage in docs/ (docs/rope.md §6 marks one)"
# A passage marked in a code comment is cut too (src/ops/softmax.cpp marks one), and the
# comment stays a comment.
grep -qF "answer:begin softmax_backward" src/ops/softmax.cpp \
  && ! grep -qF "answer:begin" "$H/src/ops/softmax.cpp" \
  && grep -qE '^// .*[*][(]Left out of the handout: an answer of graded task softmax_backward[.][)][*]$' "$H/src/ops/softmax.cpp" \
  || fail "src/ops/softmax.cpp's marked comment is not cut to a note inside the comment"

# No file of the handout holds an answer in another form: our statements elsewhere (a fast
# twin), our call by its shape or in words, a copy of a marked passage (tests/grader/handout_leaks.py).
python3 tests/grader/handout_leaks.py "$H" > "$W/leaks.log" 2>&1 || { cat "$W/leaks.log"; fail "the handout leaks answers"; }
grep -q "^handout_leaks: PASS" "$W/leaks.log" || fail "handout_leaks.py said no PASS: $(tail -n 1 "$W/leaks.log")"
read_line=$(sed -n 's/^handout_leaks: read /read /p' "$W/leaks.log")
[ -n "$read_line" ] || fail "handout_leaks.py did not say what it read"
# The leaks a reader found in an older handout (issue 64), planted in a copy, are each reported:
# rope_backward's code, the backward spelt as the rotation by −m (in words and in a test's name),
# the softmax and LayerNorm backward's formulas, AdamW's bias correction written as code.
P="$W/planted"
cp -r "$H" "$P"
awk '/graded:begin rope_backward/ { on = 1; next } /graded:end rope_backward/ { on = 0 } on' \
  src/position/rope.cpp | grep -v '^//' > "$P/src/planted_call.cpp"
[ -s "$P/src/planted_call.cpp" ] || fail "found no rope_backward region in src/position/rope.cpp to plant"
printf '%s\n' 'The backward: dx = R_{−m}·dy.' 'Softmax: dx = y ⊙ (dy − ⟨dy, y⟩).' \
  'LayerNorm: dx = rstd·(g − mean(g) − xhat·mean(g ⊙ xhat)).' > "$P/docs/planted.md"
printf '%s\n' 'TEST_CASE("the kernel with sin_sign = -1 is R_m transposed") {}' \
  'double m_hat = m / (1 - std::pow(b1, double(t)));' > "$P/tests/planted_test.cpp"
python3 tests/grader/handout_leaks.py "$P" > "$W/planted.log" 2>&1 && fail "handout_leaks.py passed a handout with planted leaks"
for want in "rope_backward: src/planted_call.cpp:3: our code" \
            "rope_backward: docs/planted.md:1: the answer in words" \
            "softmax_backward: docs/planted.md:2: the answer in words" \
            "layernorm_backward: docs/planted.md:3: the answer in words" \
            "rope_backward: tests/planted_test.cpp:1: the answer in words" \
            "adamw_step: tests/planted_test.cpp:2: the answer in words"; do
  grep -qF "LEAK $want" "$W/planted.log" || fail "handout_leaks.py did not report the planted leak '$want'"
done
[ "$(grep -c '^LEAK' "$W/planted.log")" = 6 ] || fail "handout_leaks.py reported other than the 6 planted leaks: $(grep '^LEAK' "$W/planted.log")"
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
for args in "--reference rope_forward" "--check" "--handout $W/again"; do
  # shellcheck disable=SC2086
  out=$(cd "$H" && scripts/grade.sh $args 2>&1); rc=$?
  [ "$rc" != 0 ] || fail "grade.sh $args in a handout exited 0"
  [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "this is a handout: .*course" \
    || fail "grade.sh $args in a handout said: $out"
done
# A handout of one task gives the others as written (ours), so that everything links.
scripts/grade.sh --handout "$W/one" rope_forward > /dev/null 2>&1 || fail "grade.sh --handout DIR rope_forward failed"
[ "$(cat "$W/one/students/handout.txt" 2>/dev/null)" = rope_forward ] || fail "the handout of rope_forward lists other tasks"
cmake -DMODE=ours -DTASK=rope_backward -DIN=src/position/rope.cpp -DOUT="$W/ours.given.cpp" -P students/graded_region.cmake > /dev/null
tail -n +2 "$W/one/students/tasks/rope_backward.cpp" | cmp -s - "$W/ours.given.cpp" \
  && head -n 1 "$W/one/students/tasks/rope_backward.cpp" | grep -q "^// Given, not graded" \
  || fail "the handout of rope_forward does not give rope_backward as written"
# A folder with files in it is never overwritten.
mkdir -p "$W/full" && echo "mine" > "$W/full/notes.txt"
scripts/grade.sh --handout "$W/full" > /dev/null 2>&1 && fail "--handout wrote into a non-empty folder"
[ "$(cat "$W/full/notes.txt")" = mine ] && [ "$(ls "$W/full")" = notes.txt ] || fail "--handout touched a non-empty folder"

[ "$fails" = 0 ] && echo "cli_handout: PASS (a repository of its own with the lesson's files only; ${#tasks[@]} tasks without our code, $markers answer lines cut, no leak — $read_line — no dead link, every header found, refusals work)"
exit "$fails"
