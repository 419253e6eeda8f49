#!/usr/bin/env python3
"""Student text says what the repository does, and nothing that goes stale.

    tests/lesson/check_student_text.py REPO BUILD_DIR

Two checks over the text a student reads (README.md, docs/**/*.md, configs/*.toml, the
notebooks' cells, the stubs in students/, the interactive page):

1. **No measured numbers, no history.** A duration ("109 s", "5 min 12 s", "2.4 ms"), a
   throughput ("tokens/s", "GFLOP/s") or a speed-up ("1.5× faster") lives only in
   docs/timing.md, docs/performance.md and docs/results.md, which other text links to; issue
   numbers, dates and "sessions" live nowhere a student reads. Settings that look like
   durations (a scheduler's time limit, a fuzzer's time budget) are listed in ALLOWED below,
   each with the reason.
2. **Counts agree with the commands.** "N notebooks", "N exercises", "N graded tasks",
   "N test cases" on a line with doctest filters, written in digits or words, must equal what the
   repository has: the notebooks in notebooks/, the numbered exercises of walkthrough.md §4,
   the lines of students/tasks.txt, and the test cases that `--list-test-cases` prints for
   the line's filters (test_roformer and test_gradcheck together) — or, when the line names
   test files (tests/…/*.cpp), the test cases of those files the filters match (what the
   grader runs). Counts of assertions change with
   every test added and are not quoted at all.

Prints every finding as FILE:LINE: what and why, then PASS or FAIL (exit status 1).
"""
import fnmatch
import glob
import json
import os
import re
import subprocess
import sys

REPO, BUILD = sys.argv[1], sys.argv[2]

# The files where measured numbers belong.
NUMBERS_LIVE_IN = {"docs/timing.md", "docs/performance.md", "docs/results.md"}

# (file, text on the line) → why it is not a measurement.
ALLOWED = {
    ("docs/distributed.md", "#SBATCH --time="): "a scheduler's time limit (a setting)",
    ("docs/distributed.md", "#SBATCH --signal="): "when the scheduler signals (a setting)",
    ("docs/graded-tasks.md", "longer than 60 seconds are stopped"): "the grader's time limit (GRADE_TIMEOUT)",
    ("docs/graded-tasks.md", "stopped after 60 s in"): "the grader's time-limit message",
    ("docs/testing.md", "still running after 20 s gets SIGTERM"): "the fuzzer's time limit a case",
    ("docs/testing.md", "end within 10 s); an exit 2"): "the stop bound the fuzzer holds",
    ("docs/training.md", "ended 10 s after the first (`kStopGraceSeconds`"): "the stop bound",
    ("docs/training.md", "SIGTERM: still busy 10 s after it"): "the stop bound's message",
    ("docs/training.md", "and within 10 s (or three times its longest step)"): "the stop bound",
}

WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
NUMBER = r"(\d+|" + "|".join(WORDS) + r")"

UNIT = r"(?:ms|µs|us|ns|s|sec|secs|min|mins|minutes?|seconds?|hours?)"
DURATION = re.compile(
    r"(?<![\w/^.·−-])\d+(?:[.,]\d+)?(?:\s*[–-]\s*\d+(?:[.,]\d+)?)?\s*" + UNIT + r"(?![\w/-])"
    r"|(?<![\w/^.·−-])\d+(?:[.,]\d+)?\s+h\b(?![\w/])"
    r"|\d+(?:[.,]\d+)?\s*CPU[- ](?:seconds?|minutes?|hours?|s)\b")
THROUGHPUT = re.compile(r"\d[\d  ,.]*\s*(?:k\s*)?(?:tokens/s|tok/s|GFLOP/s|steps/s|it/s)"
                        r"|\d\s*×\s*(?:PyTorch|faster|slower)")
CLASS_LENGTH = re.compile(r"\b(?:90|180)[- ]minutes?\b|\b3[- ]hours?\b|\b(?:90|180)[- ]min\b")
HISTORY = re.compile(r"\b[Ii]ssues? #?\d+|\bsessions?\b|\b20\d\d-\d\d-\d\d\b|\bbefore issue")


def student_files():
    files = ["README.md", "notebooks/README.md", "data/README.md", "students/handout/README.md"]
    files += sorted(f for f in glob.glob("docs/**/*.md", recursive=True) if f not in NUMBERS_LIVE_IN)
    files += sorted(glob.glob("docs/**/*.html", recursive=True))
    files += sorted(glob.glob("configs/*.toml"))
    files += sorted(glob.glob("students/**/*.cpp", recursive=True))
    files += sorted(glob.glob("students/*.txt"))
    return files


def lines_of(path):
    """(line number, text): of a notebook, its markdown cells and its code cells' comments (not
    the code, where "12s" is a format, nor the outputs, which are what the commands printed)."""
    if path.endswith(".ipynb"):
        nb = json.load(open(path, encoding="utf-8"))
        for c, cell in enumerate(nb["cells"], 1):
            for i, text in enumerate("".join(cell["source"]).split("\n"), 1):
                if cell["cell_type"] == "markdown":
                    yield f"cell {c} line {i}", text
                elif "#" in text:
                    yield f"cell {c} line {i}", text[text.index("#"):]
        return
    with open(path, encoding="utf-8") as f:
        for i, text in enumerate(f, 1):
            yield str(i), text.rstrip("\n")


def as_int(word):
    return int(word) if word.isdigit() else WORDS[word.lower()]


def count_exercises():
    text = open("docs/walkthrough.md", encoding="utf-8").read()
    section = text.split("## 4. Exercises", 1)[1]
    return len(re.findall(r"^\d+\. \*\*", section, re.M))


def count_tasks():
    return sum(1 for line in open("students/tasks.txt", encoding="utf-8")
               if re.match(r"^[a-z_]+ \| ", line))


def count_test_cases(pattern):
    total = 0
    for exe in ("tests/test_roformer", "tests/test_gradcheck"):
        path = os.path.join(BUILD, exe)
        if not os.path.exists(path):
            raise SystemExit(f"check_student_text: {path} is missing: build the tests first")
        out = subprocess.run([path, "--list-test-cases", "--no-version", f"-tc={pattern}"],
                             capture_output=True, text=True).stdout
        m = re.search(r"\[doctest\] listing all test case names\n(.*?)\n={5,}", out, re.S)
        names = [] if not m else [l for l in m.group(1).split("\n") if l.strip() and not l.startswith("=")]
        total += len(names)
    return total


def count_in_files(files, filters):
    """The test cases of these files whose names match any filter (doctest's rule: * and ?
    wildcards, case-insensitive) — what the grader runs when a line names the files."""
    names = []
    for f in files:
        names += re.findall(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', open(f, encoding="utf-8").read())
    return sum(1 for name in names if any(fnmatch.fnmatchcase(name.lower(), f.lower()) for f in filters))


def main():
    os.chdir(REPO)
    findings = []
    notebooks = sorted(glob.glob("notebooks/*.ipynb"))
    truth = {"notebooks": len(notebooks), "exercises": count_exercises(), "tasks": count_tasks()}
    checked_counts = 0
    for path in student_files() + notebooks:
        for where, text in lines_of(path):
            allowed = any(f == path and needle in text for (f, needle) in ALLOWED)
            scrubbed = CLASS_LENGTH.sub("", text)
            if not allowed:
                for rx, what in ((DURATION, "a duration"), (THROUGHPUT, "a throughput")):
                    for m in rx.finditer(scrubbed):
                        findings.append(f"{path}:{where}: {what} \"{m.group(0)}\" — measured numbers "
                                        "live in docs/timing.md, docs/performance.md or docs/results.md; link there")
            for m in HISTORY.finditer(text):
                findings.append(f"{path}:{where}: history \"{m.group(0)}\" — student text says what is, not how it came to be")
            for m in re.finditer(NUMBER + r" (?:executed )?(notebooks|exercises)\b", text, re.I):
                checked_counts += 1
                if as_int(m.group(1)) != truth[m.group(2).lower()]:
                    findings.append(f"{path}:{where}: \"{m.group(0)}\" but there are {truth[m.group(2).lower()]}")
            for m in re.finditer(NUMBER + r" (?:graded tasks|functions of the real library|functions a student)\b", text, re.I):
                checked_counts += 1
                if as_int(m.group(1)) != truth["tasks"]:
                    findings.append(f"{path}:{where}: \"{m.group(0)}\" but students/tasks.txt has {truth['tasks']}")
            for m in re.finditer(NUMBER + r" assertions\b", text, re.I):
                findings.append(f"{path}:{where}: \"{m.group(0)}\" — assertion counts change with every test; do not quote them")
            for m in re.finditer(NUMBER + r" test cases?\b", text, re.I):
                # The doctest filters quoted on the line ("name*"), together: -tc takes a list.
                filters = re.findall(r'(?:-tc=|--test-case=)?"([^"]*\*[^"]*)"', text)
                if not filters:
                    findings.append(f"{path}:{where}: \"{m.group(0)}\" with no doctest filter "
                                    "(\"name*\") on the line to check it against")
                    continue
                checked_counts += 1
                pattern = ",".join(filters)
                files = re.findall(r"tests/[\w/]+\.cpp", text)
                n = count_in_files(files, filters) if files else count_test_cases(pattern)
                if as_int(m.group(1)) != n:
                    findings.append(f"{path}:{where}: \"{m.group(0)}\" but the filter \"{pattern}\" matches {n}")
    for f in findings:
        print(f)
    print(f"checked {len(student_files()) + len(notebooks)} files, {checked_counts} quoted counts")
    print("FAIL" if findings else "PASS")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
