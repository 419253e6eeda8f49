#!/usr/bin/env bash
# Graded tasks (docs/graded-tasks.md). The tasks are the lines of students/tasks.txt; the hints
# the console gives are the lines of students/hints.txt.
#
#   scripts/grade.sh                  list the tasks: what to write, which tests grade it
#   scripts/grade.sh TASK... | all    grade students/tasks/<task>.cpp: build it in place of our
#                                     implementation, run the task's tests, print a score table
#                                     and, under each task, its failing test cases: the name,
#                                     the first failed check with its values, and a hint
#   scripts/grade.sh --reference ...  the same, grading our implementation (every test passes)
#   scripts/grade.sh --handout DIR [TASK...]
#                                     write a copy of the repository without the answers of
#                                     the tasks (default: all) into DIR (new or empty), for the
#                                     students; in it, --reference and --check refuse
#   scripts/grade.sh --check          CI: the handout of every task holds none of their answers
#                                     (tests/grader/handout_leaks.py); every stub as committed
#                                     compiles, fails its tests and the console names them;
#                                     every wrong solution of tests/grader/wrong/ fails with the
#                                     hint it names; our implementation passes (run by
#                                     scripts/test.sh)
#
# Builds in GRADE_BUILD_DIR (default build-student), reconfigured for each task; only the
# libraries the task's tests need and `test_student` are compiled, so after the first task a
# task costs one file and a link. JOBS (default nproc) parallel jobs; GRADE_CMAKE_ARGS extra
# configure flags (e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache). The full output of the build and
# the tests: GRADE_BUILD_DIR/<task>.<mode>.log. A task's tests run under a time limit,
# GRADE_TIMEOUT seconds (default 120: ours take a few), and keep at most GRADE_MAX_OUTPUT bytes
# of output (default 1000000): a student's endless loop or endless printing is named, not
# waited for. Exit status: 0 when every graded task passes all its tests (--check: when every
# check above holds).
set -euo pipefail
cd "$(dirname "$0")/.."
TABLE=students/tasks.txt
HINTS=students/hints.txt
BUILD="${GRADE_BUILD_DIR:-build-student}"
JOBS="${JOBS:-$(nproc)}"
GRADE_CMAKE_ARGS="${GRADE_CMAKE_ARGS:-}"
GRADE_TIMEOUT="${GRADE_TIMEOUT:-120}"
GRADE_MAX_OUTPUT="${GRADE_MAX_OUTPUT:-1000000}"
[[ "$GRADE_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || { echo "grade: GRADE_TIMEOUT must be a number of seconds ≥ 1, got '$GRADE_TIMEOUT'" >&2; exit 2; }
[[ "$GRADE_MAX_OUTPUT" =~ ^[1-9][0-9]*$ ]] || { echo "grade: GRADE_MAX_OUTPUT must be a number of bytes ≥ 1, got '$GRADE_MAX_OUTPUT'" >&2; exit 2; }

field() { awk -F' [|] ' -v t="$1" -v f="$2" '/^[a-z_]+ [|] / && $1 == t { print $f }' "$TABLE"; }
tasks() { awk -F' [|] ' '/^[a-z_]+ [|] / { print $1 }' "$TABLE"; }

list_tasks() {
  echo "Graded tasks (students/tasks.txt). Write students/tasks/<task>.cpp, then: scripts/grade.sh <task>"
  echo
  awk -F' [|] ' '/^[a-z_]+ [|] / {
      printf "  %-19s %s\n  %-19s replaces %s; graded by %s, test cases \"%s\"\n\n", $1, $6, "", $2, $4, $5 }' "$TABLE"
}

# grade TASK MODE(student|reference) [FILE] → prints "passed failed" of the task's test cases;
# "- -" when the student file does not compile (the build log is in $BUILD/<task>.<mode>.log).
# FILE (default students/tasks/<task>.cpp) is the file graded in place of ours.
grade() {
  local task="$1" mode="$2" file="${3:-}" reference=OFF log="$BUILD/$1.$2.log"
  [ "$mode" = reference ] && reference=ON
  mkdir -p "$BUILD"
  # shellcheck disable=SC2086  # GRADE_CMAKE_ARGS: extra configure flags, e.g. a compiler launcher
  if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release $GRADE_CMAKE_ARGS -DRF_STUDENT_TASK="$task" \
         -DRF_STUDENT_REFERENCE="$reference" -DRF_STUDENT_FILE="$file" > "$log" 2>&1; then
    echo "configure failed, see $log" >&2; echo "- -"; return
  fi
  if ! cmake --build "$BUILD" -j "$JOBS" --target test_student >> "$log" 2>&1; then
    echo "$task: does not compile; the errors:" >&2
    grep -E "error|Error" "$log" | head -n 20 >&2
    echo "- -"; return
  fi
  local out rc=0
  # Under the time and output limits; rc: the tests' own exit status (timeout's 124 or 137).
  out=$(timeout -k 5 "$GRADE_TIMEOUT" "$BUILD/tests/test_student" --no-version -tc="$(field "$task" 5)" 2>&1 |
        head -c "$GRADE_MAX_OUTPUT"; exit "${PIPESTATUS[0]}") || rc=$?
  echo "$out" >> "$log"
  echo "$out" > "$BUILD/$task.$mode.report"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "$task: timed out after $GRADE_TIMEOUT s in its tests — an infinite loop? (GRADE_TIMEOUT sets the limit)" >&2
    echo "- -"; return
  elif [ "$rc" = 141 ] || [ "$(printf %s "$out" | wc -c)" -ge $((GRADE_MAX_OUTPUT - 1)) ]; then  # cut by head
    echo "$task: its tests printed more than $GRADE_MAX_OUTPUT bytes — printing in a loop? (GRADE_MAX_OUTPUT sets the limit; the start is in $log)" >&2
    echo "- -"; return
  elif [ "$rc" -gt 128 ]; then
    # doctest names the test case a signal ended ("TEST CASE: …" above "test case CRASHED")
    # and still prints its summary, which is then scored as usual; without one: "- -".
    local crashed
    crashed=$(printf '%s\n' "$out" | grep -B 4 "test case CRASHED" | sed -n 's/^TEST CASE: *//p' | head -n 1 || true)
    echo "$task: its tests crashed (signal $((rc - 128)): $(kill -l $((rc - 128)) 2>/dev/null || echo ?))${crashed:+ in \"$crashed\"} — see $log" >&2
    printf '%s\n' "$out" | grep -q "test cases:" || { echo "- -"; return; }
  fi
  # doctest's summary: "[doctest] test cases: 4 | 3 passed | 1 failed | 0 skipped"
  echo "$out" | sed -n 's/.*test cases: *[0-9]* *| *\([0-9]*\) passed *| *\([0-9]*\) failed.*/\1 \2/p' \
    | tail -n 1 | grep . || echo "- -"
}

# teach TASK REPORT → each failing test case of the report by name, the first two also with
# their first failed assertion (file:line, the expression, doctest's "values:" and up to five
# "logged:" lines); then ONE hint, the symptom's: the first line of students/hints.txt
# ("task | pattern | hint") for TASK whose pattern holds for the failures as a whole — the
# failing cases' names and first assertions, one after another. A pattern is awk regular
# expressions joined by " && ", each of which must match, or, written !RE, must not: which
# tests fail together tells the bugs apart better than any one failure does.
teach() {
  awk -v task="$1" -v root="$PWD/" "$TEACH_AWK" "$HINTS" "$2"
}
TEACH_AWK='
BEGIN { FS = " [|] "; MAX_LOGGED = 5; MAX_WIDTH = 150; MAX_DETAILED = 2 }
FNR == NR {
    if ($0 ~ /^([a-z_]+|[*]) [|] / && ($1 == task || $1 == "*") && NF >= 3) { n_hints++; pattern[n_hints] = $2; hint[n_hints] = $3 }
    next
}
/^====================+$/ { flush(); in_case = 0; name = ""; failure = ""; logged_count = 0; collecting = 0; next }
/^TEST CASE: / { in_case = 1; name = $0; sub(/^TEST CASE: +/, "", name); next }
in_case && /^ +SUBCASE: / { s = $0; sub(/^ +SUBCASE: +/, "", s); name = name " / " s; next }
in_case && failure == "" && /: (FATAL )?ERROR: / {
    failure = tidy($0); collecting = 1; next
}
collecting && /^ *$/ { collecting = 0; next }
collecting && /^ +(values|logged): / { add($0); next }
collecting && /^          +[^ ]/ { add($0); next }
collecting { collecting = 0 }
END {
    flush()
    for (i = 1; i <= n_hints; i++)
        if (failures != "" && holds(pattern[i], failures)) { print "  hint: " hint[i]; break }
}
function holds(p, text,   terms, k, n, t, negated) {
    n = split(p, terms, / && /)
    for (k = 1; k <= n; k++) {
        t = terms[k]; negated = substr(t, 1, 1) == "!"
        if (negated) t = substr(t, 2)
        if ((text ~ t) == negated) return 0
    }
    return 1
}

function tidy(line) {
    sub(/^(\.\.\/)+/, "", line)   # the report names files relative to the build folder
    if (index(line, root) == 1) line = substr(line, length(root) + 1)   # or by their full path
    return line
}
function add(line) {
    if (line ~ /^ +logged: / || (logged_count > 0 && line ~ /^          +/)) {
        if (++logged_count > MAX_LOGGED) return
    }
    extra = extra "\n" line
}
function cut(line) { return length(line) > MAX_WIDTH ? substr(line, 1, MAX_WIDTH - 1) "…" : line }
function flush(   i, text, lines, k, n) {
    if (name == "" || failure == "" || seen[name]++) { extra = ""; return }
    print "  ✗ " cut(name)
    text = name "\n" failure extra
    if (++shown <= MAX_DETAILED) {
        print "      " cut(failure)
        n = split(substr(extra, 2), lines, "\n")
        for (k = 1; k <= n; k++) if (lines[k] != "") print "      " cut(lines[k])
    }
    failures = failures "\n" text
    extra = ""
}
'

# run MODE TASK... → the score table; sets ALL_PASS / ANY_PASS_STUB per task for --check.
declare -A PASSED FAILED
run() {
  local mode="$1"; shift
  printf "\n%-20s %-8s %-8s %s\n" "task ($mode)" passed failed score
  local full=0 n=0 logs=()
  for task in "$@"; do
    logs+=("$BUILD/$task.$mode.log")
    read -r p f < <(grade "$task" "$mode")
    PASSED[$task.$mode]=$p; FAILED[$task.$mode]=$f
    local score="0/1 (does not compile, crashed or timed out)"
    if [ "$p" != "-" ]; then
      if [ "$f" = 0 ] && [ "$p" -gt 0 ]; then score="1/1"; full=$((full + 1)); else score="0/1"; fi
    fi
    n=$((n + 1))
    printf "%-20s %-8s %-8s %s\n" "$task" "$p" "$f" "$score"
    [ "$p" != "-" ] && [ "$f" != 0 ] && teach "$task" "$BUILD/$task.$mode.report"
  done
  echo "score: $full of $n tasks pass all their tests (log$([ "$n" -gt 1 ] && echo s): ${logs[*]})"
  [ "$full" = "$n" ]
}

# check_console TASK → the console of the stub's grade names its first failing test case.
check_console() {
  local report="$BUILD/$1.student.report" first
  first=$(awk '/^TEST CASE: /{ sub(/^TEST CASE: +/, ""); print; exit }' "$report")
  if [ -z "$first" ] || ! grep -qF "✗ $first" <<< "$(teach "$1" "$report")"; then
    echo "FAIL: the console of the stub of $1 does not name its failing test case '$first'"; return 1
  fi
}

# check_wrong FILE → grading the wrong solution FILE (tests/grader/wrong/<task>.<bug>.cpp) fails
# and the console shows the hint its "// expected hint:" line names.
check_wrong() {
  local file="$1" task expected p f
  task=$(basename "$file" .cpp); task=${task%%.*}
  expected=$(sed -n 's|^// expected hint: ||p' "$file")
  read -r p f < <(grade "$task" student "$file")
  if [ "$p" = "-" ] || [ "$f" = 0 ]; then echo "FAIL: $file is not caught ($p passed, $f failed)"; return 1; fi
  if ! grep -F "hint: " <<< "$(teach "$task" "$BUILD/$task.student.report")" | grep -qF -- "$expected"; then
    echo "FAIL: grading $file shows no hint '$expected'"; return 1
  fi
  echo "  $(basename "$file" .cpp): caught, hint shown"
}

# handout DIR [TASK...] → a copy of the repository (tracked files at HEAD) without the answers of
# the chosen tasks: each reference file in src/ becomes a line that compiles the student's file
# (so the default build runs the student's function, which throws "not implemented yet" until
# written), the docs' passages between <!-- answer:begin [TASK] --> and <!-- answer:end --> are
# cut (a marker naming no task: cut for any handout), and the answer key
# docs/exercises-answers.md and the wrong solutions tests/grader/wrong/ are left out.
# students/handout.txt lists the chosen tasks; its presence makes --reference and --check refuse.
handout() {
  local dir="${1:-}"; shift || true
  [ -n "$dir" ] || { echo "grade: --handout needs a folder: scripts/grade.sh --handout DIR [TASK...]" >&2; exit 2; }
  if [ -e "$dir" ] && { [ ! -d "$dir" ] || [ -n "$(ls -A "$dir")" ]; }; then
    echo "grade: $dir exists and is not an empty folder; the handout is written only into a new or empty one" >&2; exit 2
  fi
  git rev-parse --verify -q HEAD > /dev/null || { echo "grade: --handout needs the git repository" >&2; exit 2; }
  local chosen=("$@") task ours depth
  [ ${#chosen[@]} -eq 0 ] && mapfile -t chosen < <(tasks)
  for task in "${chosen[@]}"; do check_task "$task"; done
  mkdir -p "$dir"
  git archive --format=tar HEAD | tar -x -C "$dir"
  for task in "${chosen[@]}"; do
    ours=$(field "$task" 2)
    depth=$(dirname "$ours" | sed 's|[^/][^/]*|..|g')
    cat > "$dir/$ours" <<SHIM
// Handout: this function is graded task $task, yours to write in
//     students/tasks/$task.cpp        (grade it: scripts/grade.sh $task)
// Every build compiles your file here, so build/roformer and the tests run your function;
// until you write it, it throws "not implemented yet".
#include "$depth/students/tasks/$task.cpp"
SHIM
  done
  for task in "${chosen[@]}"; do cut_twin "$dir" "$task"; done
  rm -rf "$dir/docs/exercises-answers.md" "$dir/tests/grader/wrong" "$dir/tests/grader/answer_ideas.txt"
  printf '%s\n' "${chosen[@]}" > "$dir/students/handout.txt"
  # The marked passages of every text file — docs, notebooks, comments in code (a marker in a
  # comment: `// <!-- answer:begin TASK -->`; the note then stays in the comment; in a notebook
  # the cut stays inside one JSON string: the note holds no quote) — and the links to the answer
  # key, which is left out.
  { grep -rlZ --exclude-dir=.git -e '<!-- answer:begin' "$dir" || true
    find "$dir" \( -name '*.md' -o -name '*.ipynb' \) -print0; } | sort -zu \
    | RF_HANDOUT_TASKS="${chosen[*]}" xargs -0 perl -0pi -e '
      my %chosen = map { $_ => 1 } split / /, $ENV{RF_HANDOUT_TASKS};
      s{<!-- answer:begin ?([a-z_]*) -->.*?<!-- answer:end -->}{
        ($1 eq "" || $chosen{$1}) ? "*(Left out of the handout: an answer of graded task"
          . ($1 eq "" ? "s" : " $1") . ".)*" : $&}gse;
      s{\[([^\]]*)\]\((?:\.\./docs/|\./)?exercises-answers\.md(?:#[^)]*)?\)}{$1 (not in the handout)}g'
  echo "handout: $dir, without the answers of: ${chosen[*]}"
  echo "  the student writes students/tasks/<task>.cpp and grades it with scripts/grade.sh <task>"
}

# cut_twin DIR TASK → the fast path's twin of TASK in the handout DIR runs the student's function
# instead of holding our answer in another form: the SIMD RoPE rows of src/fast/simd_kernels.hpp
# (their scalar tails are the kernel, both pairings) call rope_kernel through a new file outside
# the per-ISA files (simd_kernels.hpp: the One Definition Rule note); AdamW::step_vectorized
# (src/fast/adamw_vectorized.cpp, step()'s update in lanes) calls step(). A twin that is not
# where it was stops the handout: fix the cut here.
cut_twin() {
  local dir="$1" task="$2" file
  case "$task" in
    rope_forward)
      file="$dir/src/fast/simd_kernels.hpp"
      RF_DECLARATION='namespace rf {
// Handout: the RoPE rows of graded task rope_forward run your rope_kernel
// (src/fast/rope_rows_handout.cpp).
void rope_rows_handout(Real* x, size_t T, size_t D, size_t r, const Real* cos, const Real* sin,
                       Real sin_sign, bool interleaved);
}  // namespace rf

namespace rf {
namespace {' RF_ROWS='    // Handout: the lanes of graded task rope_forward are cut; these rows run your rope_kernel.
    static void rope_rows_interleaved(Real* x, size_t T, size_t D, size_t r, const Real* cos2,
                                      const Real* sin2, Real sin_sign) {
        rope_rows_handout(x, T, D, r, cos2, sin2, sin_sign, true);
    }

    static void rope_rows_half(Real* x, size_t T, size_t D, size_t r, const Real* cos,
                               const Real* sin, Real sin_sign) {
        rope_rows_handout(x, T, D, r, cos, sin, sin_sign, false);
    }

' perl -0pi -e '
        s{^namespace rf \{\nnamespace \{}{$ENV{RF_DECLARATION}}m or die "no namespace\n";
        s{^    static void rope_rows_interleaved\(.*?(?=^    static void adamw_update\()}{$ENV{RF_ROWS}}ms
          or die "no rope rows\n"' "$file" \
        || { echo "grade: --handout: the RoPE rows of $file are not where the cut expects them" >&2; exit 2; }
      cat > "$dir/src/fast/rope_rows_handout.cpp" <<'CPP'
// Handout: the fast path's RoPE rows (src/fast/simd_kernels.hpp) run the student's rope_kernel,
// in place (in == out), one row of heads at a time. Interleaved rows come with the angle tables
// expanded to [T, r]: cos2 = (c_0, c_0, c_1, c_1, …), sin2 = (−s_0, s_0, −s_1, s_1, …).
#include <vector>

#include "position/rope.hpp"

namespace rf {

void rope_rows_handout(Real* x, size_t T, size_t D, size_t r, const Real* cos, const Real* sin,
                       Real sin_sign, bool interleaved) {
    if (!interleaved) {
        rope_kernel(x, x, 1, T, D, r, RopePairing::half, cos, sin, sin_sign, false);
        return;
    }
    const size_t h = r / 2;
    std::vector<Real> c(T * h), s(T * h);
    for (size_t t = 0; t < T; ++t)
        for (size_t i = 0; i < h; ++i) {
            c[t * h + i] = cos[t * r + 2 * i];
            s[t * h + i] = sin[t * r + 2 * i + 1];
        }
    rope_kernel(x, x, 1, T, D, r, RopePairing::interleaved, c.data(), s.data(), sin_sign, false);
}

}  // namespace rf
CPP
      ;;
    adamw_step)
      file="$dir/src/fast/adamw_vectorized.cpp"
      grep -q "void AdamW::step_vectorized(double lr)" "$file" \
        || { echo "grade: --handout: $file does not define AdamW::step_vectorized(double lr)" >&2; exit 2; }
      cat > "$file" <<'CPP'
// Handout: AdamW's update on the fast path (model.fused = true) is graded task adamw_step's
// twin; in the handout it runs your AdamW::step (students/tasks/adamw_step.cpp).
#include "nn/adamw.hpp"

namespace rf {

void AdamW::step_vectorized(double lr) { step(lr); }

}  // namespace rf
CPP
      ;;
  esac
}

check_task() {
  [ -n "$(field "$1" 1)" ] || { echo "grade: no task '$1'; the tasks: $(tasks | tr '\n' ' ')" >&2; exit 2; }
}
refuse_in_handout() {
  if [ -f students/handout.txt ]; then
    echo "grade: this is a handout: the reference answers are not in it ($1 needs the full repository)" >&2
    exit 2
  fi
}

case "${1:-list}" in
  list|-h|--help) list_tasks ;;
  --handout)
    refuse_in_handout --handout; shift
    handout "$@" ;;
  --check)
    refuse_in_handout --check
    mapfile -t all < <(tasks)
    bad=0
    # The handout of every task holds none of their answers (tests/grader/handout_leaks.py).
    echo "the handout of every task (--handout): no file holds our code or a marked answer passage"
    leaks=$(mktemp -d)
    if ( handout "$leaks/handout" > "$leaks/handout.log" 2>&1 ); then
      python3 tests/grader/handout_leaks.py "$leaks/handout" || bad=1
    else
      cat "$leaks/handout.log"; echo "FAIL: grade.sh --handout failed"; bad=1
    fi
    rm -rf "$leaks"
    run student "${all[@]}" || true
    for task in "${all[@]}"; do
      sp=${PASSED[$task.student]}; sf=${FAILED[$task.student]}
      if [ "$sp" = "-" ]; then echo "FAIL: the stub of $task does not compile"; bad=1
      elif [ "$sf" = 0 ]; then echo "FAIL: the stub of $task passes its tests (they grade nothing)"; bad=1
      else check_console "$task" || bad=1; fi
    done
    echo; echo "the wrong solutions of tests/grader/wrong/ (each must fail and show its hint):"
    wrong=(tests/grader/wrong/*.cpp)
    for file in "${wrong[@]}"; do check_wrong "$file" || bad=1; done
    run reference "${all[@]}" || true
    for task in "${all[@]}"; do
      rp=${PASSED[$task.reference]}; rf=${FAILED[$task.reference]}
      if [ "$rp" = "-" ] || [ "$rf" != 0 ] || [ "$rp" = 0 ]; then
        echo "FAIL: our implementation of $task does not pass its tests ($rp passed, $rf failed)"; bad=1
      fi
    done
    [ "$bad" = 0 ] && echo "grade --check: PASS (the handout holds no answer; ${#all[@]} stubs compile, fail" \
      "and name their failing tests; ${#wrong[@]} wrong solutions fail with their hints; the reference passes)"
    exit "$bad" ;;
  *)
    mode=student
    [ "$1" = --reference ] && { refuse_in_handout --reference; mode=reference; shift; }
    [ $# -eq 0 ] && set -- all
    if [ "$1" = all ]; then mapfile -t chosen < <(tasks); else chosen=("$@"); fi
    for task in "${chosen[@]}"; do check_task "$task"; done
    run "$mode" "${chosen[@]}" ;;
esac
