#!/usr/bin/env bash
# Graded tasks (docs/graded-tasks.md). The tasks are the lines of students/tasks.txt; the hints
# the console gives are the lines of students/hints.txt. The same script grades in the course
# repository and in a student's handout.
#
#   scripts/grade.sh                  list the tasks: what to write, which tests grade it
#   scripts/grade.sh TASK... | all    grade students/tasks/<task>.cpp: compile it in place of our
#                                     implementation, run the task's tests, print a score table
#                                     and, under each task, its failing test cases: the name,
#                                     the first failed check with its values, and a hint
#   scripts/grade.sh --build          build every task's tests with the student's files (the
#                                     handout's ./install.sh), without grading
#   scripts/grade.sh --reference ...  the same, grading our implementation (every test passes)
#   scripts/grade.sh --handout DIR [TASK...]
#                                     write the student's handout into DIR (new or empty): a git
#                                     repository of its own with the tasks (default: all), the
#                                     code their tests need and none of the answers; in it,
#                                     --reference, --check and --handout refuse
#   scripts/grade.sh --check          CI: the handout of every task holds none of their answers
#                                     (tests/grader/handout_leaks.py); every stub as committed
#                                     compiles, fails its tests and the console names them;
#                                     every wrong solution of tests/grader/wrong/ fails with the
#                                     hint it names (a crash and an endless loop among them);
#                                     our implementation passes (run by scripts/test.sh)
#   scripts/grade.sh --class OUT DIR... [--no-regrade] [--force]
#                                     the instructor's class table (scripts/class_table.py) of
#                                     the students' repositories DIR (their students/grades.csv):
#                                     OUT/class.csv and OUT/class.html, every task file graded
#                                     again with our tests; refused in a handout
#
# Builds in GRADE_BUILD_DIR (default build-student) from students/CMakeLists.txt: the lesson's
# code once, then per task one test program, with each graded function an object of its own
# (compiled with AddressSanitizer and UBSan), so an attempt compiles one file and links. JOBS
# (default nproc) parallel jobs; GRADE_CMAKE_ARGS extra configure flags (e.g.
# -DCMAKE_CXX_COMPILER_LAUNCHER=ccache). The full output of the build and the tests:
# GRADE_BUILD_DIR/<task>.<mode>.log. A task's tests run under a time limit, GRADE_TIMEOUT
# seconds (default 60: ours take a few), and keep at most GRADE_MAX_OUTPUT bytes of output
# (default 1000000): a student's endless loop or endless printing is named, not waited for; so
# is a crash, with the test case, the kind of bad access and the line. Exit status: 0 when every
# graded task passes all its tests (--check: when every check above holds).
set -euo pipefail
cd "$(dirname "$0")/.."
TABLE=students/tasks.txt
HINTS=students/hints.txt
BUILD="${GRADE_BUILD_DIR:-build-student}"
JOBS="${JOBS:-$(nproc)}"
GRADE_CMAKE_ARGS="${GRADE_CMAKE_ARGS:-}"
GRADE_TIMEOUT="${GRADE_TIMEOUT:-60}"
GRADE_MAX_OUTPUT="${GRADE_MAX_OUTPUT:-1000000}"
[[ "$GRADE_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || { echo "grade: GRADE_TIMEOUT must be a number of seconds ≥ 1, got '$GRADE_TIMEOUT'" >&2; exit 2; }
[[ "$GRADE_MAX_OUTPUT" =~ ^[1-9][0-9]*$ ]] || { echo "grade: GRADE_MAX_OUTPUT must be a number of bytes ≥ 1, got '$GRADE_MAX_OUTPUT'" >&2; exit 2; }

# coreutils' timeout (Homebrew's coreutils calls it gtimeout on macOS)
TIMEOUT=$(command -v timeout || command -v gtimeout || true)
[ -n "$TIMEOUT" ] || { echo "grade: no timeout command (coreutils; on macOS: brew install coreutils)" >&2; exit 2; }

field() { awk -F' [|] ' -v t="$1" -v f="$2" '/^[a-z_]+ [|] / && $1 == t { print $f }' "$TABLE"; }
all_tasks() { awk -F' [|] ' '/^[a-z_]+ [|] / { print $1 }' "$TABLE"; }
# The tasks to list and grade: in a handout, those handed out (the others are given, written).
tasks() { if [ -f students/handout.txt ]; then grep -x '[a-z_]*' students/handout.txt; else all_tasks; fi; }

list_tasks() {
  echo "Graded tasks (students/tasks.txt). Write students/tasks/<task>.cpp, then: scripts/grade.sh <task>"
  echo
  awk -F' [|] ' -v chosen="$(tasks | paste -sd' ')" 'BEGIN { n = split(chosen, c, " "); for (i = 1; i <= n; i++) listed[c[i]] = 1 }
    /^[a-z_]+ [|] / && ($1 in listed) {
      printf "  %-19s %s\n  %-19s replaces %s; graded by %s, test cases \"%s\"\n\n", $1, $6, "", $2, $4, $5 }' "$TABLE"
}

# The lesson build (students/CMakeLists.txt) in $BUILD: configured once; cmake reconfigures it
# itself when the lists change.
configure() {
  local home
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
  if [ -n "$home" ] && [ "$(realpath "$home")" != "$(realpath students)" ]; then
    echo "grade: $BUILD was configured from $home, not from students/ (the lesson build): remove it (rm -rf $BUILD) and grade again" >&2
    return 1
  fi
  { [ -f "$BUILD/Makefile" ] || [ -f "$BUILD/build.ninja" ]; } && return 0
  mkdir -p "$BUILD"
  # shellcheck disable=SC2086  # GRADE_CMAKE_ARGS: extra configure flags, e.g. a compiler launcher
  cmake -S students -B "$BUILD" -DCMAKE_BUILD_TYPE=Release $GRADE_CMAKE_ARGS > "$BUILD/configure.log" 2>&1 \
    || { echo "grade: configuring the lesson build failed; its output: $BUILD/configure.log" >&2
         tail -n 20 "$BUILD/configure.log" >&2; return 1; }
}

# choose TASK FILE → the graded function of TASK is compiled from FILE: $BUILD/graded/TASK.cpp
# is one #include line, rewritten only when it changes (so nothing else recompiles).
choose() {
  local shim="$BUILD/graded/$1.cpp" line
  line="#include \"$(realpath "$2")\""
  mkdir -p "$BUILD/graded"
  [ "$(cat "$shim" 2>/dev/null)" = "$line" ] || printf '%s\n' "$line" > "$shim"
}
# ours TASK → a file of our implementation: the task's marked region of the file that holds it
# (students/graded_region.cmake writes it to $BUILD/ours/TASK.cpp, rewritten only when it
# changes, its lines numbered as in that file); in a handout, which has none, the student's.
ours() {
  local f out="$BUILD/ours/$1.cpp"; f=$(field "$1" 2)
  mkdir -p "$BUILD/ours"
  if [ -f "$f" ] && cmake -DMODE=ours -DTASK="$1" -DIN="$f" -DOUT="$out.new" -DLINE_FILE="$(realpath "$f")" \
       -P students/graded_region.cmake > /dev/null 2>&1; then
    cmp -s "$out.new" "$out" && rm -f "$out.new" || mv -f "$out.new" "$out"
    echo "$out"
  else
    rm -f "$out.new"; echo "students/tasks/$1.cpp"
  fi
}

# grade TASK MODE(student|reference) [FILE] → prints "passed failed" of the task's test cases,
# or "- - WHY" (WHY: compile, crash, timeout, output) when there is no count. FILE (default
# students/tasks/<task>.cpp; ours for reference) is graded; every other graded function is
# ours (a handout: the student's). Its test program runs under the time and output limits.
grade() {
  local task="$1" mode="$2" file="${3:-}" log="$BUILD/$1.$2.log" report="$BUILD/$1.$2.report" t
  configure || { echo "- - compile"; return; }
  if [ -z "$file" ]; then
    if [ "$mode" = reference ]; then file=$(ours "$task"); else file="students/tasks/$task.cpp"; fi
  fi
  [ -f "$file" ] || { echo "grade: $file does not exist (scripts/grade.sh lists the tasks)" >&2; echo "- - compile"; return; }
  for t in $(all_tasks); do
    if [ "$t" = "$task" ]; then choose "$t" "$file"; else choose "$t" "$(ours "$t")"; fi
  done
  if ! cmake --build "$BUILD" -j "$JOBS" --target "test_$task" > "$log" 2>&1; then
    echo "$task: does not compile; the errors:" >&2
    grep -E "error|Error" "$log" | head -n 20 >&2
    echo "- - compile"; return
  fi
  local out rc=0
  # Under the time and output limits; rc: the tests' own exit status (timeout's 124 or 137).
  # AddressSanitizer stops at the first bad access in a graded function and aborts, so that
  # doctest names the test case that was running.
  out=$(ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:print_legend=0" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1" \
        "$TIMEOUT" -k 5 "$GRADE_TIMEOUT" "$BUILD/test_$task" --no-version -tc="$(field "$task" 5)" 2>&1 |
        head -c "$GRADE_MAX_OUTPUT"; exit "${PIPESTATUS[0]}") || rc=$?
  printf '%s\n' "$out" >> "$log"
  printf '%s\n' "$out" > "$report"
  local running why=""
  # doctest names the test case a signal ended ("TEST CASE: …" above "CRASHED").
  running=$(printf '%s\n' "$out" | grep -B 4 "test case CRASHED" | sed -n 's/^TEST CASE: *//p' | head -n 1 || true)
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    why=timeout
    echo "$task: its tests never finished: stopped after $GRADE_TIMEOUT s${running:+ in \"$running\"} — a loop that never ends? (GRADE_TIMEOUT sets the limit)" >&2
    crash_report "$report" "$running" "never finished: stopped after $GRADE_TIMEOUT s"
  elif [ "$rc" = 141 ] || [ "$(printf %s "$out" | wc -c)" -ge $((GRADE_MAX_OUTPUT - 1)) ]; then  # cut by head
    why=output
    echo "$task: its tests printed more than $GRADE_MAX_OUTPUT bytes — printing in a loop? (GRADE_MAX_OUTPUT sets the limit; the start is in $log)" >&2
  elif [ "$rc" -gt 128 ] || grep -q "^SUMMARY: \(Address\|UndefinedBehavior\)Sanitizer" <<< "$out"; then
    why=crash
    local where what signal
    where=$(sanitizer_place "$out" || true)
    what=$(sanitizer_kind "$out" || true)
    signal=$((rc > 128 ? rc - 128 : 6))
    signal="signal $signal: $(kill -l "$signal" 2>/dev/null || echo ?)"
    echo "$task: its tests crashed${running:+ in \"$running\"}${what:+: $what}${where:+, at $where} ($signal) — see $log" >&2
    what=${what%% (*}
    crash_report "$report" "$running" "${what:-$signal}${where:+ at $where}"
    # doctest still printed its summary (a crash it caught, such as an exception that left an
    # OpenMP loop): the count stands, the crash is one of the failures.
    grep -q "test cases:" <<< "$out" && why=""
  fi
  if [ -n "$why" ]; then echo "- - $why"; return; fi
  # doctest's summary: "[doctest] test cases: 4 | 3 passed | 1 failed | 0 skipped"
  echo "$out" | sed -n 's/.*test cases: *[0-9]* *| *\([0-9]*\) passed *| *\([0-9]*\) failed.*/\1 \2/p' \
    | tail -n 1 | grep . || echo "- - crash"
}

# The sanitizer's report, in words: the kind of bad access and the line of ours or the
# student's where it happened (the first frame in a graded file, else the first with a file).
sanitizer_kind() {
  local kind access
  kind=$(printf '%s\n' "$1" | sed -n 's/^SUMMARY: AddressSanitizer: \([a-z-]*\).*/\1/p' | head -n 1 || true)
  access=$(printf '%s\n' "$1" | sed -n 's/^\(READ\|WRITE\) of size.*/\1/p' | head -n 1 || true)
  case "$kind" in
    *buffer-overflow) echo "$( [ "$access" = WRITE ] && echo writing || echo reading ) past the end of a buffer ($kind)" ;;
    heap-use-after-free) echo "using memory already freed ($kind)" ;;
    stack-overflow) echo "a recursion that never ends ($kind)" ;;
    SEGV) echo "an access to an address no buffer has (SEGV)" ;;
    "") { printf '%s\n' "$1" | sed -n 's/.*: runtime error: \(.*\)/\1/p'
          # an exception that left an OpenMP loop ends the program (std::terminate)
          { printf '%s\n' "$1" | grep -A 1 "^terminate called after throwing" || true; } |
            sed -n 's/^ *what(): *\(.*\)/an exception left a parallel loop: \1/p'
        } | head -n 1 ;;
    *) echo "$kind" ;;
  esac
}
sanitizer_place() {
  local frames
  frames=$(printf '%s\n' "$1" | sed -n 's/^ *#[0-9]* 0x[0-9a-f]* in \(.*\) \(\/[^ ]*:[0-9][0-9]*\)\(:[0-9]*\)\{0,1\}$/\2 \1/p;
                                         s/^\(\/[^ ]*:[0-9][0-9]*\):[0-9]*: runtime error: .*/\1/p')
  { printf '%s\n' "$frames" | grep -E "/(students/tasks|tests/grader/wrong)/|/$(all_tasks | while read -r t; do field "$t" 2; done | paste -sd"|")" \
      || printf '%s\n' "$frames"; } | head -n 1 | awk -v root="$PWD/" '{
        where = $1; if (index(where, root) == 1) where = substr(where, length(root) + 1)
        fn = $0; sub(/^[^ ]* /, "", fn); sub(/\(.*/, "", fn); sub(/^rf::/, "", fn)
        print where (fn != "" && fn != $1 ? " in " fn : "") }' || true
}
# crash_report REPORT CASE WHAT → the failure doctest wrote for the test case a signal ended
# says WHAT instead ("test case CRASHED: SIGABRT" → "… CRASHED: writing past the end of a
# buffer …"), or one of its shape is added, so that the console lists it and the patterns of
# students/hints.txt can match WHAT.
crash_report() {
  if grep -q "test case CRASHED: " "$1"; then
    WHAT="$3" perl -pi -e 's/test case CRASHED: .*/test case CRASHED: $ENV{WHAT}/' "$1"
  else
    printf '%s\n' "===============================================================================" \
      "TEST CASE:  ${2:-(no test case was running)}" "" "grader: ERROR: test case CRASHED: $3" \
      "===============================================================================" >> "$1"
  fi
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

# run MODE TASK... → the score table; sets PASSED / FAILED per task for --check.
declare -A PASSED FAILED WHY
run() {
  local mode="$1"; shift
  printf "\n%-20s %-8s %-8s %s\n" "task ($mode)" passed failed score
  local full=0 n=0 logs=() p f why score
  for task in "$@"; do
    logs+=("$BUILD/$task.$mode.log")
    read -r p f why < <(grade "$task" "$mode")
    PASSED[$task.$mode]=$p; FAILED[$task.$mode]=$f; WHY[$task.$mode]=$why
    case "$why" in
      compile) score="0/1 (does not compile)" ;;
      crash) score="0/1 (crashed)" ;;
      timeout) score="0/1 (never finished)" ;;
      output) score="0/1 (printed without end)" ;;
      *) if [ "$f" = 0 ] && [ "$p" -gt 0 ]; then score="1/1"; full=$((full + 1)); else score="0/1"; fi ;;
    esac
    n=$((n + 1))
    printf "%-20s %-8s %-8s %s\n" "$task" "$p" "$f" "$score"
    if [ "$f" != 0 ] && [ "$why" != compile ] && [ "$why" != output ]; then
      teach "$task" "$BUILD/$task.$mode.report"
    fi
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
# and the console shows the hint its "// expected hint:" line names (a "// grade timeout: N"
# line: graded under that time limit).
check_wrong() {
  local file="$1" task expected limit p f why console
  task=$(basename "$file" .cpp); task=${task%%.*}
  expected=$(sed -n 's|^// expected hint: ||p' "$file")
  limit=$(sed -n 's|^// grade timeout: ||p' "$file")
  read -r p f why < <(GRADE_TIMEOUT="${limit:-$GRADE_TIMEOUT}" grade "$task" student "$file" 2>/dev/null)
  if [ "$why" != crash ] && [ "$why" != timeout ] && { [ "$p" = "-" ] || [ "$f" = 0 ]; }; then
    echo "FAIL: $file is not caught ($p passed, $f failed${why:+, $why})"; return 1
  fi
  console=$(teach "$task" "$BUILD/$task.student.report")
  if ! grep -F "hint: " <<< "$console" | grep -qF -- "$expected"; then
    echo "FAIL: grading $file shows no hint '$expected'; the console:"; echo "$console"; return 1
  fi
  echo "  $(basename "$file" .cpp): caught${why:+ ($why)}, hint shown"
}

# handout DIR [TASK...] → the student's own repository in DIR (new or empty), one commit: the
# graded tasks' stubs (default: every task), the grader, the lesson build and the files of src/
# and tests/ it compiles (students/lesson_files.txt: no other room of the course; the files
# that hold our answers with every graded region cut), the docs it lists, and the handout's
# own README, install script and container files (students/handout/, at the top). A task not
# handed out comes with our region as its student file, so that everything links. Passages between <!-- answer:begin [TASK] --> and
# <!-- answer:end --> (docs and comments in code) are cut for the chosen tasks (a marker naming
# no task: always), and a link to a file the handout lacks becomes its text and the course
# path. students/handout.txt lists the chosen tasks; its presence makes --reference, --check and
# --handout refuse.
handout() {
  local dir="${1:-}"; shift || true
  [ -n "$dir" ] || { echo "grade: --handout needs a folder: scripts/grade.sh --handout DIR [TASK...]" >&2; exit 2; }
  if [ -e "$dir" ] && { [ ! -d "$dir" ] || [ -n "$(ls -A "$dir")" ]; }; then
    echo "grade: $dir exists and is not an empty folder; the handout is written only into a new or empty one" >&2; exit 2
  fi
  git rev-parse --verify -q HEAD > /dev/null || { echo "grade: --handout needs the git repository" >&2; exit 2; }
  local chosen=("$@") task paths
  [ ${#chosen[@]} -eq 0 ] && mapfile -t chosen < <(tasks)
  for task in "${chosen[@]}"; do check_task "$task"; done
  mapfile -t paths < <(grep -v '^#' students/lesson_files.txt | grep .)
  paths+=(scripts/grade.sh students/CMakeLists.txt students/graded_region.cmake students/lesson_files.txt students/tasks.txt
          students/hints.txt)
  mkdir -p "$dir"
  git archive --format=tar HEAD -- "${paths[@]}" | tar -x -C "$dir"
  git archive --format=tar HEAD:students/handout | tar -x -C "$dir"
  mkdir -p "$dir/students/tasks"
  for task in $(all_tasks); do
    if printf '%s\n' "${chosen[@]}" | grep -qx "$task"; then
      git show "HEAD:students/tasks/$task.cpp" > "$dir/students/tasks/$task.cpp"
    else
      git show "HEAD:$(field "$task" 2)" > "$dir/students/tasks/$task.cpp.host"
      cmake -DMODE=ours -DTASK="$task" -DIN="$dir/students/tasks/$task.cpp.host" -DOUT="$dir/students/tasks/$task.cpp.ours" \
        -P students/graded_region.cmake > /dev/null
      { echo "// Given, not graded in this handout: task $task, written for you (the other tasks call it)."
        cat "$dir/students/tasks/$task.cpp.ours"; } > "$dir/students/tasks/$task.cpp"
      rm -f "$dir/students/tasks/$task.cpp.host" "$dir/students/tasks/$task.cpp.ours"
    fi
  done
  # The files that hold our answers, without them (each region one comment naming the task's file).
  for f in $(for task in $(all_tasks); do field "$task" 2; done | sort -u); do
    cmake -DMODE=cut -DIN="$dir/$f" -DOUT="$dir/$f" -P students/graded_region.cmake > /dev/null
  done
  printf '%s\n' "${chosen[@]}" > "$dir/students/handout.txt"
  # The marked passages of every text file (a marker in a comment: `// <!-- answer:begin TASK -->`;
  # the note then stays in the comment), and the links to files the handout lacks.
  { grep -rlZ --exclude-dir=.git -e '<!-- answer:begin' "$dir" || true
    find "$dir" -name '*.md' -print0; } | sort -zu \
    | RF_HANDOUT_TASKS="${chosen[*]}" xargs -0 perl -0pi -e '
      my %chosen = map { $_ => 1 } split / /, $ENV{RF_HANDOUT_TASKS};
      s{<!-- answer:begin ?([a-z_]*) -->.*?<!-- answer:end -->}{
        ($1 eq "" || $chosen{$1}) ? "*(Left out of the handout: an answer of graded task"
          . ($1 eq "" ? "s" : " $1") . ".)*" : $&}gse;'
  find "$dir" -name '*.md' -print0 | HANDOUT="$(realpath "$dir")" xargs -0 perl -0pi -e '
      use File::Basename; use File::Spec;
      my $here = dirname($ARGV);
      s{\[([^\]]*)\]\(([^)\s#:]+)(#[^)\s]*)?\)}{
        my ($text, $target) = ($1, $2);
        my $path = File::Spec->rel2abs($target, $here);
        (-e $path) ? $& : do {
          my @parts;
          for (split m{/}, File::Spec->abs2rel($path, $ENV{HANDOUT})) {
            $_ eq ".." ? pop @parts : push @parts, $_ }
          my $course = join "/", @parts;
          $text =~ /^`?\Q$course\E`?$/ ? "$text (course repository)" : "$text (course repository: `$course`)" } }ge'
  git -C "$dir" -c init.defaultBranch=main init -q
  git -C "$dir" add -A
  git -C "$dir" -c user.name="roformer-cpp handout" -c user.email="handout@roformer-cpp.invalid" \
    commit -q -m "The handout: graded tasks ${chosen[*]}"
  echo "handout: $dir, a git repository of its own, without the answers of: ${chosen[*]}"
  echo "  on a student's machine: ./install.sh (installs, builds, grades); then students/tasks/<task>.cpp and scripts/grade.sh <task>"
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
  --build)
    [ $# -eq 1 ] || { echo "grade: --build takes no argument" >&2; exit 2; }
    configure || exit 1
    for task in $(all_tasks); do choose "$task" "students/tasks/$task.cpp"; done
    echo "grade: building the lesson's code and every task's tests in $BUILD"
    cmake --build "$BUILD" -j "$JOBS" > "$BUILD/build.log" 2>&1 \
      || { grep -E "error|Error" "$BUILD/build.log" | head -n 20 >&2; echo "grade: the build failed; its output: $BUILD/build.log" >&2; exit 1; } ;;
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
      if [ "$sp" = "-" ]; then echo "FAIL: the stub of $task gives no count (${WHY[$task.student]})"; bad=1
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
  --class)
    refuse_in_handout --class; shift
    # DIR and OUT are named from where the user stood before the cd to the root above
    root=$PWD; cd "$OLDPWD"
    exec python3 "$root/scripts/class_table.py" "$@" ;;
  *)
    mode=student
    [ "$1" = --reference ] && { refuse_in_handout --reference; mode=reference; shift; }
    [ $# -eq 0 ] && set -- all
    if [ "$1" = all ]; then mapfile -t chosen < <(tasks); else chosen=("$@"); fi
    for task in "${chosen[@]}"; do check_task "$task"; done
    run "$mode" "${chosen[@]}" ;;
esac
