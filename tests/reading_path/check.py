#!/usr/bin/env python3
"""The reading path measured from the program: which lines one classroom step runs.

  check.py --step BIN --objects DIR --source REPO --config CONFIG [--report FILE]

Runs BIN (tests/reading_path/reading_path_step.cpp, built with gcov's counters for the core,
BERT's masking and the step) on CONFIG, reads gcov's JSON for every counter file under DIR,
and compares the lines that ran (count > 0, in files under src/) with docs/reading-path.md:

  - every line that ran lies inside a range the table lists for its file, or inside the
    short list of plumbing the page names (between its plumbing markers);
  - the path, counted from what ran, stays within the budget: the files that ran, and the
    lines of the listed ranges of those files, at most MAX_LINES lines in MAX_FILES files.

Prints the figures (files and lines that ran, lines listed, per file), then PASS or FAIL with
each line that ran outside the listed ranges. --report writes the per-file figures as CSV.
"""
import argparse
import csv
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

MAX_LINES = 3000
MAX_FILES = 25
MAX_ROPE_LINES = 200  # the listed lines of RoPE's own files (src/position/rope*)
TABLE = "docs/reading-path.md"


_SOURCES = {}


def source_lines(repo, path):
    """A source file's lines, read once however many table rows name it."""
    if path not in _SOURCES:
        with open(os.path.join(repo, path), encoding="utf-8") as f:
            _SOURCES[path] = f.read().splitlines()
    return _SOURCES[path]


def parse_ranges(text, begin, end, repo):
    """{file: [(first, last), ...]} from the table rows between the two markers (the first
    cell in backticks names the file, the next cell its lines)."""
    if begin not in text or end not in text:
        sys.exit(f"FAIL: {TABLE} lacks its {begin} … {end} markers")
    body = text.split(begin, 1)[1].split(end, 1)[0]
    ranges = {}
    for row in body.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        named = [i for i, c in enumerate(cells[:2]) if c.startswith("`")]
        if not named or len(cells) < named[0] + 2:
            continue
        path = cells[named[0]].strip("`")
        lines = cells[named[0] + 1]
        if lines == "all":
            with open(os.path.join(repo, path), encoding="utf-8") as f:
                span = (1, sum(1 for _ in f))
        else:
            m = re.fullmatch(r"(\d+)\s*[–-]\s*(\d+)", lines)
            if not m:
                sys.exit(f"FAIL: {TABLE}: {path}: lines '{lines}' is neither 'all' nor 'a–b'")
            span = (int(m.group(1)), int(m.group(2)))
            anchor = cells[named[0] + 2].strip("`") if len(cells) > named[0] + 2 else ""
            text_lines = source_lines(repo, path)
            if anchor and anchor != "—" and (span[0] > len(text_lines)
                                             or anchor not in text_lines[span[0] - 1]):
                sys.exit(f"FAIL: {TABLE}: {path}: line {span[0]} no longer contains "
                         f"'{anchor}'; move the range {lines} to where it is")
        ranges.setdefault(path, []).append(span)
    return ranges


def covered(ranges, line):
    return any(a <= line <= b for a, b in ranges)


def lines_that_ran(step, objects, source, config, work):
    for old in glob.glob(os.path.join(objects, "**", "*.gcda"), recursive=True):
        os.remove(old)
    run = subprocess.run([step, config], cwd=source, capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        sys.exit(f"FAIL: {step} exited {run.returncode}: {run.stderr.strip()}")
    counters = sorted(glob.glob(os.path.join(objects, "**", "*.gcda"), recursive=True))
    if not counters:
        sys.exit(f"FAIL: {step} wrote no counter file (*.gcda) under {objects}")
    gcov = subprocess.run(["gcov", "--json-format", "--preserve-paths"] + counters, cwd=work,
                          capture_output=True, text=True)
    if gcov.returncode != 0:
        sys.exit(f"FAIL: gcov exited {gcov.returncode}: {gcov.stderr.strip()[:400]}")
    ran = {}
    src = os.path.realpath(os.path.join(source, "src")) + os.sep
    for name in glob.glob(os.path.join(work, "*.gcov.json.gz")):
        with gzip.open(name, "rt", encoding="utf-8") as f:
            data = json.load(f)
        cwd = data.get("current_working_directory", "")
        for entry in data["files"]:
            path = os.path.realpath(os.path.join(cwd, entry["file"]))
            if not path.startswith(src):
                continue
            rel = os.path.relpath(path, source)
            hit = {l["line_number"] for l in entry["lines"] if l["count"] > 0}
            if hit:
                ran.setdefault(rel, set()).update(hit)
    return ran


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", required=True)
    ap.add_argument("--objects", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--report")
    a = ap.parse_args()
    with open(os.path.join(a.source, TABLE), encoding="utf-8") as f:
        text = f.read()
    listed = parse_ranges(text, "<!-- reading-path:begin -->", "<!-- reading-path:end -->", a.source)
    plumbing = parse_ranges(text, "<!-- plumbing:begin -->", "<!-- plumbing:end -->", a.source)
    with tempfile.TemporaryDirectory() as work:
        ran = lines_that_ran(a.step, a.objects, a.source, a.config, work)

    outside = []
    rows = []
    for path in sorted(ran):
        lines = sorted(ran[path])
        spans = listed.get(path, [])
        extra = [l for l in lines if not covered(spans, l) and not covered(plumbing.get(path, []), l)]
        outside += [(path, l) for l in extra]
        on_path = [l for l in lines if covered(spans, l)]
        listed_lines = len({n for s in spans for n in range(s[0], s[1] + 1)}) if on_path else 0
        rows.append((path, len(lines), len(on_path), listed_lines))
    files = [r for r in rows if r[2] > 0]
    total_ran = sum(r[2] for r in rows)
    total_listed = sum(r[3] for r in rows)
    print(f"{'file':44} {'ran':>5} {'on path':>8} {'listed':>7}")
    for path, n, on, lst in rows:
        print(f"{path:44} {n:5} {on:8} {lst:7}")
    print(f"reading path from what ran: {total_ran} lines ran on the path in {len(files)} files; "
          f"the listed ranges of those files: {total_listed} lines (budget {MAX_LINES} lines, "
          f"{MAX_FILES} files); {sum(r[1] for r in rows)} lines ran in all, "
          f"{sum(r[1] - r[2] for r in rows) - len(outside)} of them plumbing")
    if a.report:
        with open(a.report, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["file", "lines_ran", "lines_ran_on_path", "lines_listed"])
            w.writerows(rows)
    failures = []
    if outside:
        by_file = {}
        for path, l in outside:
            by_file.setdefault(path, []).append(l)
        for path, ls in by_file.items():
            failures.append(f"{path}: {len(ls)} lines ran outside the listed ranges: "
                            + compress(ls))
    rope_lines = sum(r[3] for r in rows if r[0].startswith("src/position/rope") and r[2] > 0)
    print(f"RoPE's reading lines (the listed ranges of src/position/rope*): {rope_lines} "
          f"(budget {MAX_ROPE_LINES})")
    if rope_lines > MAX_ROPE_LINES:
        failures.append(f"RoPE's listed lines {rope_lines} > {MAX_ROPE_LINES}")
    # The check bites: a listed range cut short by its last line, where that line ran, must
    # leave a line outside the table.
    cut = next(((path, i) for path, spans in listed.items() for i, (a, b) in enumerate(spans)
                if b in ran.get(path, set())), None)
    if cut is None:
        failures.append("no listed range ends on a line that ran: the cut test has nothing to cut")
    else:
        path, i = cut
        spans = list(listed[path])
        spans[i] = (spans[i][0], spans[i][1] - 1)
        caught = spans[i][1] + 1 in ran[path] and not covered(spans, spans[i][1] + 1) \
            and not covered(plumbing.get(path, []), spans[i][1] + 1)
        print(f"cut test: {path} range {listed[path][i][0]}–{listed[path][i][1]} shortened by "
              f"its last line → {'caught' if caught else 'NOT caught'}")
        if not caught:
            failures.append("a range cut short by a line that ran went unnoticed")
    if total_listed > MAX_LINES:
        failures.append(f"{total_listed} listed lines > {MAX_LINES}")
    if len(files) > MAX_FILES:
        failures.append(f"{len(files)} files > {MAX_FILES}")
    for f in failures:
        print("FAIL: " + f)
    if failures:
        print(f"FAIL: list these lines in {TABLE} (or move the code off the step), "
              "and keep the budget")
        return 1
    print("PASS")
    return 0


def compress(lines):
    out, start, prev = [], None, None
    for l in lines + [None]:
        if start is None:
            start = prev = l
        elif l is not None and l == prev + 1:
            prev = l
        else:
            out.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = l
    return ", ".join(out)


if __name__ == "__main__":
    sys.exit(main())
