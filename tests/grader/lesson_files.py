#!/usr/bin/env python3
"""students/lesson_files.txt against what the course's own build compiles for the graded tasks'
tests (docs/graded-tasks.md, "The handout"): the files of src/ and tests/ a handout must hold.

    tests/grader/lesson_files.py SOURCE_DIR BUILD_DIR

From BUILD_DIR (the Release build of CMakeLists.txt, test programs built): the tasks' test
objects (field 4 of students/tasks.txt) are linked once more against the core's, the RoPE lab's, data's and
io's archives (float32) or the double-precision core (the f64 tasks) with a linker map, which
names every archive member the link pulls in; their sources, and every header of src/ and
tests/ that the compiler's dependency files list for those objects and the test objects, are
what the lesson build needs. (The precompiled header holds no file of src/, so the dependency
files list them all: CMakeLists.txt, RF_PCH.) The files that hold a graded region (field 2) are
listed like any other: the lesson build compiles them with the regions cut. Prints PASS, or
FAIL with each file missing from or extra in the list.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

source, build = (os.path.realpath(a) for a in sys.argv[1:3])
rows = [line.rstrip("\n").split(" | ") for line in open(os.path.join(source, "students/tasks.txt"),
                                                         encoding="utf-8")
        if re.match(r"^[a-z_]+ [|] ", line)]


def object_of(test):
    """The object file the build made for a test source (tests/lesson/x.cpp, tests/gradcheck/…)."""
    found = glob.glob(os.path.join(build, "tests/CMakeFiles/*.dir", os.path.relpath(test, "tests") + ".o"))
    if not found:
        sys.exit(f"lesson_files: FAIL: no object of {test} in {build} (build test_roformer and test_gradcheck first)")
    return max(found, key=os.path.getmtime)  # (a build folder may keep an older layout's objects)


def depfile_paths(obj):
    """The files of src/ and tests/ an object's dependency file lists (repository-relative)."""
    text = open(obj + ".d", encoding="utf-8").read().replace("\\\n", " ")
    cwd = obj[:obj.index("/CMakeFiles/")]  # the folder the compiler ran in: the paths are relative to it
    out = set()
    for word in text.split()[1:]:
        path = os.path.realpath(os.path.join(cwd, word))
        rel = os.path.relpath(path, source)
        if rel.startswith(("src/", "tests/")):
            out.add(rel)
    return out


members = {}  # archive member name → its object file (the sources are under CMakeFiles/<lib>.dir/)
CORE = ["roformer_" + s for s in ("assembly", "linear", "fast", "inspect", "ropelab", "step",
                                  "model", "position", "nn", "ops", "tensor")]  # (what uses first)
for lib in CORE + [c + "_f64" for c in CORE] + ["roformer_data", "roformer_io"]:
    for obj in glob.glob(os.path.join(build, f"CMakeFiles/{lib}.dir/src/**/*.o"), recursive=True):
        members.setdefault((lib, os.path.basename(obj)), obj)

needed = set()
for program, libs in (("f32", ["roformer_data", "roformer_io"] + CORE), ("f64", [c + "_f64" for c in CORE])):
    tests = [t for row in rows if row[2] == program for t in row[3].split(",")]
    # (the test programs' own main; not the RoPE lab's plug, tests/with_rope_lab.cpp, which the
    # lesson build leaves out: the graded tests run without the lab)
    objects = [object_of("tests/main.cpp")] + [
        object_of(t) for t in tests]
    with tempfile.TemporaryDirectory() as tmp:
        link = ["g++", "-o", os.path.join(tmp, "a.out"), *objects,
                *[os.path.join(build, f"lib{lib}.a") for lib in libs],
                "-fopenmp", f"-Wl,-Map={tmp}/map", "-Wl,--unresolved-symbols=ignore-all"]
        subprocess.run(link, check=True, capture_output=True)
        pulled = re.findall(r"^(?:\S*/)?lib(\w+)\.a\(([^)]+)\)\s*$", open(os.path.join(tmp, "map"), encoding="utf-8").read(), re.M)
    for lib, member in set(pulled):
        obj = members.get((lib, member))
        if obj is None:
            sys.exit(f"lesson_files: FAIL: the link pulled {member} of lib{lib}.a, found under no CMakeFiles/{lib}.dir")
        needed |= depfile_paths(obj)
    for obj in objects:
        needed |= depfile_paths(obj)

listed = {line.strip() for line in open(os.path.join(source, "students/lesson_files.txt"), encoding="utf-8")
          if line.strip() and not line.startswith("#") and line.startswith(("src/", "tests/"))}
missing, extra = sorted(needed - listed), sorted(listed - needed)
for f in missing:
    print(f"lesson_files: FAIL: {f} is compiled or included for the graded tasks' tests but not in students/lesson_files.txt")
for f in extra:
    print(f"lesson_files: FAIL: {f} is in students/lesson_files.txt but nothing the graded tasks' tests build uses it")
if missing or extra:
    sys.exit(1)
print(f"lesson_files: PASS (students/lesson_files.txt lists the {len(needed)} files of src/ and tests/ "
      "that the graded tasks' tests compile and include)")
