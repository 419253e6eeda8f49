#!/usr/bin/env python3
"""The reading path measured from the real program: which lines of src/ one classroom step runs.

  check.py --roformer BIN --build DIR --source REPO [--table FILE] [--suggest] [--report CSV]

BIN is `roformer` built with gcov's counters (-DRF_COVERAGE=ON, scripts/reading_path.sh builds
it into DIR): its `train` resets the counters once the loop has asked its stop question after
step 1 and writes them just before it asks it after step 2 — one whole turn of the loop, the
stop question (the signal guard plugged in by the command) left out (src/cli/cmd_train.cpp). This runs

  BIN train --config configs/classroom.toml --set model.fused=false --stop-after 2

(step 2 a step like every other of the run: no evaluation or checkpoint in the turn), under
gdb when there is one, which stops once at the line of RoPE's kernel that turns a pair inside
step 1's train_step and reads the frames between the two. Then it reads gcov's JSON for every
counter file under DIR, keeps the lines that ran (count > 0) in files under src/ (but those
between `#ifdef RF_COVERAGE` and its `#endif`: the counters' own hook, not the program), and
compares them with the table of docs/reading-path.md (or --table):

  - every line that ran lies inside a range the table lists for its file, or in the plumbing
    list after it (at most PLUMBING_MAX lines); else FAIL, naming each file:line;
  - a listed range shortened by a line that ran is caught (the check bites);
  - RoPE's own files (src/position/rope*) list at most MAX_ROPE_LINES lines;
  - the figures, printed: the files and lines that ran, the lines listed over those files and in
    the whole table, the frames from train_step to the kernel and the virtual calls among them,
    the calls between our functions that leave one file for another (the jumps between files),
    and the budget (BUDGET), met or not; a figure of ENFORCED over its budget fails the check.

--suggest prints, per file that ran, the line ranges that ran: what the table's rows must cover.
--report writes the per-file figures as CSV.
"""
import argparse
import csv
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TABLE = "docs/reading-path.md"
CONFIG = "configs/classroom.toml"
PLUMBING_MAX = 10
MAX_ROPE_LINES = 200  # the listed lines of RoPE's own files (src/position/rope*)
# The budget of one composed step: listed lines (the whole table), files that run,
# frames from train_step to the line that turns a pair, virtual calls among those frames.
BUDGET = {"listed lines": 2000, "files that ran": 20, "frames": 8, "virtual calls": 1}
# The figures held: one over its budget fails the check.
ENFORCED = ("listed lines", "files that ran", "frames", "virtual calls")
# The line that turns a pair: the first line of this file containing this text (not a comment).
KERNEL = ("src/position/rope.cpp", "y_lo =")
STEP_FUNCTION = "rf::train_step"
DONE_MARK = "coverage: the counters of step 2 written"

_SOURCES = {}


def source_lines(repo, path):
    """A source file's lines, read once however many table rows name it."""
    if path not in _SOURCES:
        with open(os.path.join(repo, path), encoding="utf-8") as f:
            _SOURCES[path] = f.read().splitlines()
    return _SOURCES[path]


def parse_ranges(text, begin, end, repo, table, problems):
    """{file: [(first, last), ...]} from the table rows between the two markers (the first
    cell in backticks names the file, the next cell its lines, the one after the text its
    first line contains); a range whose first line lacks that text is left out, and said in
    `problems`."""
    if begin not in text or end not in text:
        sys.exit(f"FAIL: {table} lacks its {begin} … {end} markers")
    body = text.split(begin, 1)[1].split(end, 1)[0]
    ranges = {}
    for row in body.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        named = [i for i, c in enumerate(cells[:2]) if c.startswith("`")]
        if not named or len(cells) < named[0] + 2:
            continue
        path = cells[named[0]].strip("`")
        lines = cells[named[0] + 1]
        if not os.path.isfile(os.path.join(repo, path)):
            sys.exit(f"FAIL: {table}: {path} does not exist")
        if lines == "all":
            span = (1, len(source_lines(repo, path)))
        else:
            m = re.fullmatch(r"(\d+)\s*[–-]\s*(\d+)", lines)
            if not m:
                sys.exit(f"FAIL: {table}: {path}: lines '{lines}' is neither 'all' nor 'a–b'")
            span = (int(m.group(1)), int(m.group(2)))
            anchor = cells[named[0] + 2].strip("`") if len(cells) > named[0] + 2 else ""
            text_lines = source_lines(repo, path)
            if anchor and anchor != "—" and (span[0] > len(text_lines)
                                             or anchor not in text_lines[span[0] - 1]):
                problems.append(f"{table}: {path}: line {span[0]} no longer contains "
                                f"'{anchor}'; move the range {lines} to where it is")
                continue
        ranges.setdefault(path, []).append(span)
    return ranges


def covered(ranges, line):
    return any(a <= line <= b for a, b in ranges)


def count_listed(spans):
    return len({n for a, b in spans for n in range(a, b + 1)})


def kernel_line(repo):
    path, text = KERNEL
    for i, line in enumerate(source_lines(repo, path), 1):
        if text in line and not line.lstrip().startswith("//"):
            return path, i
    sys.exit(f"FAIL: no line of {path} contains '{text}' (the line that turns a pair): "
             "name it in tests/reading_path/check.py's KERNEL")


def run_step(roformer, build, source, work):
    """Runs the classroom training, under gdb when there is one; returns the frames gdb saw
    ({"frames": [...], "error": ...}) or None without gdb."""
    for old in glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True):
        os.remove(old)
    train = [os.path.abspath(roformer), "train", "--config", CONFIG, "--set", "model.fused=false",
             "--stop-after", "2", "--out", os.path.join(work, "run")]
    gdb = shutil.which("gdb")
    frames_out = os.path.join(work, "frames.json")
    env = dict(os.environ, RF_CALL_EDGES_OUT=os.path.join(work, "calls.txt"))
    if gdb:
        path, line = kernel_line(source)
        env.update(RF_FRAMES_OUT=frames_out, RF_STEP_FUNCTION=STEP_FUNCTION,
                   RF_KERNEL_LOCATION=f"{os.path.basename(path)}:{line}")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "frames.py")
        command = [gdb, "-nx", "-batch", "-x", script, "--args"] + train
    else:
        command = train
    run = subprocess.run(command, cwd=source, capture_output=True, text=True, env=env)
    said = run.stdout + run.stderr
    if gdb and not os.path.exists(frames_out) and re.search(r"ptrace|not permitted", said):
        # (a container that forbids ptrace: the frames cannot be read here, the lines can)
        reason = next(l for l in said.splitlines() if re.search(r"ptrace|not permitted", l))
        print(f"frames: skipped (gdb cannot run the program here: {reason.strip()})")
        gdb, command = None, train
        run = subprocess.run(command, cwd=source, capture_output=True, text=True, env=env)
    if run.returncode != 0 or DONE_MARK not in run.stderr:
        sys.stdout.write(run.stdout[-4000:])
        sys.stdout.write(run.stderr[-4000:])
        sys.exit(f"FAIL: `{' '.join(command)}` exited {run.returncode}"
                 + ("" if DONE_MARK in run.stderr else
                    f" without '{DONE_MARK}' (is {roformer} built with -DRF_COVERAGE=ON?)"))
    if not gdb:
        return None
    if not os.path.exists(frames_out):
        return {"error": "gdb wrote no frames: " + run.stdout[-1500:]}
    with open(frames_out, encoding="utf-8") as f:
        return json.load(f)


def coverage_only(repo, path):
    """The lines of `path` between `#ifdef RF_COVERAGE` and its `#endif`: they exist only in
    the coverage build (the counters' own hook, cli/cmd_train.cpp), not in the program read."""
    out, depth, inside = set(), 0, False
    for i, line in enumerate(source_lines(repo, path), 1):
        word = line.strip()
        if inside:
            out.add(i)
            depth += word.startswith("#if")
            depth -= word.startswith("#endif")
            inside = depth > 0
        elif word.startswith("#ifdef RF_COVERAGE"):
            out.add(i)
            depth, inside = 1, True
    return out


def lines_that_ran(build, source, work):
    counters = sorted(os.path.abspath(p) for p in
                      glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True))
    if not counters:
        sys.exit(f"FAIL: the run wrote no counter file (*.gcda) under {build}")
    out = os.path.join(work, "gcov")
    os.makedirs(out)
    gcov = subprocess.run(["gcov", "--json-format", "--preserve-paths"] + counters, cwd=out,
                          capture_output=True, text=True)
    if gcov.returncode != 0:
        sys.exit(f"FAIL: gcov exited {gcov.returncode}: {gcov.stderr.strip()[:400]}")
    ran = {}
    src = os.path.realpath(os.path.join(source, "src")) + os.sep
    for name in glob.glob(os.path.join(out, "*.gcov.json.gz")):
        with gzip.open(name, "rt", encoding="utf-8") as f:
            data = json.load(f)
        cwd = data.get("current_working_directory", "")
        for entry in data["files"]:
            path = os.path.realpath(os.path.join(cwd, entry["file"]))
            if not path.startswith(src):
                continue
            hit = {l["line_number"] for l in entry["lines"] if l["count"] > 0}
            if hit:
                ran.setdefault(os.path.relpath(path, source), set()).update(hit)
    for path in list(ran):
        ran[path] -= coverage_only(source, path)
        if not ran[path]:
            del ran[path]
    return ran


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


def call_jumps(roformer, source, work, listing):
    """The calls between our functions in the counted turn (src/cli/call_edges.cpp wrote them:
    function and call site, offsets into the program), resolved by addr2line: prints how many
    distinct caller → callee pairs there were, and how many of them leave one file of src/ for
    another — the jumps a reader makes following the step. Returns that count, or None."""
    path = os.path.join(work, "calls.txt")
    if not os.path.exists(path) or not shutil.which("addr2line"):
        print("jumps between files: not measured (no call file, or no addr2line)")
        return None
    pairs = [line.split() for line in open(path, encoding="utf-8") if line.strip()]
    functions = sorted({f for f, _ in pairs})
    sites = sorted({hex(int(s, 16) - 1) for _, s in pairs})  # the call instruction, not the return
    def resolve(addresses):
        out = subprocess.run(["addr2line", "-f", "-C", "-e", roformer] + addresses,
                             capture_output=True, text=True, check=True).stdout.splitlines()
        src = os.path.realpath(os.path.join(source, "src")) + os.sep
        named = {}
        for address, name, where in zip(addresses, out[0::2], out[1::2]):
            file = os.path.realpath(where.rsplit(":", 1)[0])
            named[address] = (name, os.path.relpath(file, source) if file.startswith(src) else None)
        return named
    callee, caller = resolve(functions), resolve(sites)
    edges = set()
    for f, s in pairs:
        (to_name, to_file), (from_name, from_file) = callee[f], caller[hex(int(s, 16) - 1)]
        if to_file and from_file:
            edges.add((from_file, from_name, to_file, to_name))
    across = [e for e in edges if e[0] != e[2]]
    file_pairs = {(e[0], e[2]) for e in across}
    engine = sum(1 for e in across if e[2].startswith("src/tensor/tensor."))
    print(f"calls: {len(edges)} distinct caller → callee pairs among the functions of src/ in the "
          f"turn; jumps between files: {len(across)} of them leave one file for another "
          f"({len(file_pairs)} pairs of files; {engine} of the jumps are calls of the Tensor "
          f"class, src/tensor/tensor.{{hpp,cpp}}, {len(across) - engine} the others)")
    if listing:
        print("the jumps, per pair of files (caller's file → callee's file: callees):")
        for a, b in sorted(file_pairs):
            names = sorted({e[3] for e in across if (e[0], e[2]) == (a, b)})
            print(f"  {a} → {b}: {len(names)}: {', '.join(n.split('(')[0] for n in names)[:200]}")
    return len(across)


def report_frames(frames):
    """Prints the frames from train_step to the kernel; returns (frames, virtual calls) or
    None when they could not be measured."""
    if frames is None:
        if not shutil.which("gdb"):
            print("frames: skipped (no gdb here; scripts/setup.sh --all installs it)")
        return None
    if frames.get("error"):
        print("FAIL: frames: " + frames["error"])
        return "error"
    below = frames["frames"]  # the kernel's frame first, train_step's last
    print(f"frames from {STEP_FUNCTION} to the line that turns a pair "
          f"({frames['kernel']}), gdb's backtrace:")
    for i, f in enumerate(below):
        kind = "virtual " if f["virtual"] else "OpenMP  " if f.get("openmp") else " " * 8
        print(f"  #{i:<2} {kind}{f['name']}  ({f['where']})")
    depth = len(below) - 1
    virtual = [f["name"] for f in below[:-1] if f["virtual"]]
    openmp = sum(1 for f in below if f.get("openmp"))
    print(f"frames: {depth} from {STEP_FUNCTION} to the kernel ({STEP_FUNCTION} excluded, the "
          f"kernel's frame included"
          + (f"; {openmp} of them OpenMP's: a parallel region and its loop" if openmp else "")
          + f"); virtual calls on the way: {len(virtual)}"
          + (f" ({', '.join(virtual)})" if virtual else ""))
    return depth, len(virtual)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--roformer", required=True, help="roformer built with -DRF_COVERAGE=ON")
    ap.add_argument("--build", required=True, help="its build directory (the counter files)")
    ap.add_argument("--source", required=True)
    ap.add_argument("--table", default=TABLE, help=f"the document to check (default {TABLE})")
    ap.add_argument("--suggest", action="store_true",
                    help="print the line ranges that ran, per file")
    ap.add_argument("--report")
    a = ap.parse_args()
    with open(os.path.join(a.source, a.table), encoding="utf-8") as f:
        text = f.read()
    failures = []
    listed = parse_ranges(text, "<!-- reading-path:begin -->", "<!-- reading-path:end -->",
                          a.source, a.table, failures)
    plumbing = parse_ranges(text, "<!-- plumbing:begin -->", "<!-- plumbing:end -->", a.source,
                            a.table, failures)
    with tempfile.TemporaryDirectory() as work:
        frames = run_step(a.roformer, a.build, a.source, work)
        ran = lines_that_ran(a.build, a.source, work)
        jumps = call_jumps(os.path.abspath(a.roformer), a.source, work, a.suggest)

    plumbing_lines = sum(count_listed(s) for s in plumbing.values())
    if plumbing_lines > PLUMBING_MAX:
        failures.append(f"the plumbing list has {plumbing_lines} lines (at most {PLUMBING_MAX})")
    outside, rows = [], []
    for path in sorted(ran):
        lines = sorted(ran[path])
        spans, extra_spans = listed.get(path, []), plumbing.get(path, [])
        extra = [l for l in lines if not covered(spans, l) and not covered(extra_spans, l)]
        outside += [(path, extra)] if extra else []
        rows.append((path, len(lines), count_listed(spans)))
    print(f"{'file':44} {'ran':>5} {'listed':>7}")
    for path, n, lst in rows:
        print(f"{path:44} {n:5} {lst:7}")
    files_ran = len(rows)
    lines_ran = sum(r[1] for r in rows)
    listed_over_ran = sum(r[2] for r in rows)
    listed_all = sum(count_listed(s) for s in listed.values())
    print(f"one composed step of {CONFIG}: {lines_ran} lines ran in {files_ran} files of src/; "
          f"the table lists {listed_over_ran} lines of those files, {listed_all} lines in "
          f"{len(listed)} files in all; plumbing {plumbing_lines} lines")
    if a.suggest:
        print("the lines that ran, per file (what the table's ranges must cover):")
        for path in sorted(ran):
            lines = sorted(ran[path])
            print(f"  {path}: {lines[0]}–{lines[-1]}: {compress(lines)}")
    if a.report:
        with open(a.report, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["file", "lines_ran", "lines_listed"])
            w.writerows(rows)
    for path, ls in outside:
        failures.append(f"{len(ls)} lines ran outside the listed ranges: "
                        + ", ".join(f"{path}:{r}" for r in compress(ls).split(", ")))

    # The check bites: a listed range cut short by its last line, where that line ran, must
    # leave a line outside the table.
    cut = next(((path, i) for path, spans in listed.items() for i, (lo, hi) in enumerate(spans)
                if hi in ran.get(path, set())), None)
    if cut is None:
        failures.append("no listed range ends on a line that ran: the cut test has nothing to cut")
    else:
        path, i = cut
        spans = list(listed[path])
        spans[i] = (spans[i][0], spans[i][1] - 1)
        line = spans[i][1] + 1
        caught = not covered(spans, line) and not covered(plumbing.get(path, []), line)
        print(f"cut test: {path} range {listed[path][i][0]}–{listed[path][i][1]} shortened by "
              f"its last line → {'caught' if caught else 'NOT caught'}")
        if not caught:
            failures.append("a range cut short by a line that ran went unnoticed")

    rope_lines = sum(count_listed(s) for p, s in listed.items() if p.startswith("src/position/rope"))
    print(f"RoPE's reading lines (the listed ranges of src/position/rope*): {rope_lines} "
          f"(at most {MAX_ROPE_LINES})")
    if rope_lines > MAX_ROPE_LINES:
        failures.append(f"RoPE's listed lines {rope_lines} > {MAX_ROPE_LINES}")

    measured = report_frames(frames)
    if measured == "error":
        failures.append("the frames from train_step to RoPE's kernel could not be read")
    figures = {"listed lines": listed_all, "files that ran": files_ran}
    if isinstance(measured, tuple):
        figures["frames"], figures["virtual calls"] = measured
    parts = [f"{name} {figures[name]} ≤ {limit}" if name in figures else f"{name} (not measured)"
             for name, limit in BUDGET.items()]
    over = [name for name in figures if figures[name] > BUDGET[name]]
    print("budget: " + ", ".join(parts) + (" (met)" if not over and len(figures) == len(BUDGET)
                                          else f" (not met: {', '.join(over) or 'unmeasured'})"))
    held = [name for name in over if name in ENFORCED]
    if held:
        failures.append("over the budget: " + ", ".join(f"{n} {figures[n]} > {BUDGET[n]}" for n in held))

    for f in failures:
        print("FAIL: " + f)
    if failures:
        print(f"FAIL: list these lines in {a.table} (or move the code off the step); "
              "scripts/reading_path.sh --suggest prints the ranges that ran")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
