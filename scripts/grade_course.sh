#!/usr/bin/env bash
# The course repository's side of grading, which scripts/grade.sh hands these three modes (a
# handout has neither this file nor the answers they need; the grader itself is
# students/grader/, built and run by scripts/grade.sh):
#
#   scripts/grade.sh --handout DIR [TASK...]
#                     write the student's handout into DIR (new or empty): a git repository of
#                     its own with the tasks (default: all), the code their tests need and none
#                     of the answers, and students/pristine.txt, the fingerprints of the files
#                     the grade is built from
#   scripts/grade.sh --check
#                     CI: the handout of every task holds none of their answers
#                     (tests/grader/handout_leaks.py); then the grader's own checks
#                     (--check-grading): every stub fails and names its failing test, every
#                     wrong solution of tests/grader/wrong/ scores 0 with the hint it names, the
#                     course's implementation passes (run by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
TABLE=students/tasks.txt
BUILD="${GRADE_BUILD_DIR:-build-student}"
GRADER="$BUILD/grader"

field() { awk -F' [|] ' -v t="$1" -v f="$2" '/^[a-z_]+ [|] / && $1 == t { print $f }' "$TABLE"; }
all_tasks() { awk -F' [|] ' '/^[a-z_]+ [|] / { print $1 }' "$TABLE"; }
tasks() { all_tasks; }

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
  paths+=(scripts/grade.sh scripts/grade.cmd students/CMakeLists.txt students/graded_region.cmake
          students/lesson_files.txt students/tasks.txt students/hints.txt students/grader)
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
  # The record of the files the grade is built from (the grader checks them before each grade):
  # every file of src/, tests/, scripts/ and students/ but the student's own.
  local grader_bin
  grader_bin=$(realpath "$GRADER")
  ( cd "$dir" && find src tests scripts students -type f ! -path 'students/tasks/*' ! -name 'pristine.txt*' | LC_ALL=C sort \
      | xargs "$grader_bin" --fingerprint > students/pristine.txt.new && mv students/pristine.txt.new students/pristine.txt )
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

# The grader, built (scripts/grade.sh builds it before anything else).
scripts/grade.sh list > /dev/null

case "$1" in
  --handout)
    shift
    handout "$@" ;;
  --check)
    [ $# -eq 1 ] || { echo "grade: --check takes no argument" >&2; exit 2; }
    bad=0
    echo "the handout of every task (--handout): no file holds our code or a marked answer passage"
    leaks=$(mktemp -d)
    if ( handout "$leaks/handout" > "$leaks/handout.log" 2>&1 ); then
      python3 tests/grader/handout_leaks.py "$leaks/handout" || bad=1
    else
      cat "$leaks/handout.log"; echo "FAIL: grade.sh --handout failed"; bad=1
    fi
    rm -rf "$leaks"
    "$GRADER" --check-grading || bad=1
    [ "$bad" = 0 ] && echo "grade --check: PASS (the handout holds no answer; the grader's checks pass)"
    exit "$bad" ;;
  *) echo "grade_course: unknown mode '$1' (scripts/grade.sh --help)" >&2; exit 2 ;;
esac
