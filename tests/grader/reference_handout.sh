#!/usr/bin/env bash
# A handout whose task files hold the course's own implementation (each task's marked region):
# the starting point of the tests that grade a handout on another laptop's stand-in
# (busybox_grade.sh, mingw_wine.sh). Run from the course repository's top folder.
#
#   tests/grader/reference_handout.sh HANDOUT WORKDIR    (WORKDIR: the course-side grader's build)
set -u
H=$1 W=$2
GRADE_BUILD_DIR="$W/course-build" scripts/grade.sh --handout "$H" > "$W/handout.log" 2>&1 \
  || { cat "$W/handout.log"; echo "FAIL: grade.sh --handout failed"; exit 1; }
for task in $(awk -F' [|] ' '/^[a-z_]+ [|] / { print $1 }' students/tasks.txt); do
  host=$(awk -F' [|] ' -v t="$task" '$1 == t { print $2 }' students/tasks.txt)
  cmake -DMODE=ours -DTASK="$task" -DIN="$host" -DOUT="$H/students/tasks/$task.cpp" -P students/graded_region.cmake > /dev/null \
    || { echo "FAIL: $task: no region in $host"; exit 1; }
done
