#!/usr/bin/env python3
"""The instructor's class table, scripts/grade.sh --class (scripts/class_table.py; ctest
grader_class_table, and grader_class_table_browser with --browser).

    tests/grader/class_table_test.py REPO_ROOT WORK_DIR [--browser]

Makes four students' records in WORK_DIR: ada solves every task; bo is stuck on rope_forward
(repeated "rope: relative property" failures, hints 1 to 3); cy's report says rope_forward
passes but its regrade fails; dee is only a grades.csv file, its lines not in time order. The
regrade is a small fake (RF_CLASS_REGRADE) that grades a task file by a word in it. Checks the
numbers of class.csv (solved counts, medians, the most common failing test and hint, the
mismatch flags), --no-regrade, a regrade that writes no line, the refusals (one line naming the
file and line, exit 2) and that the page is self-contained. --browser: a screenshot of the page
in headless Chromium is a 1200×900 PNG showing the table's colours (skipped, exit 77, without
/usr/bin/chromium). Prints PASS, or a FAIL line per failed check.
"""
import csv
import datetime
import os
import shutil
import struct
import subprocess
import sys
import zlib

ROOT, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
BROWSER = "--browser" in sys.argv[3:]
GRADE = os.path.join(ROOT, "scripts", "grade.sh")
# The script itself, for the cases that need not go through grade.sh --class.
TABLE = [sys.executable, os.path.join(ROOT, "scripts", "class_table.py")]
HEADER = ("time_utc,task,score,passed,failed,status,failing_test,hint_id,hint_level,compiler,"
          "os")
TASKS = ["rope_forward", "rope_backward", "softmax_backward", "layernorm_backward",
         "mlm_masking", "adamw_step"]
START = datetime.datetime(2026, 12, 7, 9, 0, 0)
RELATIVE = "rope: relative property"
NORMS = 'rope: norms, "kept"'  # a comma and quotes: the CSV must quote it
STEPS = 'adamw: several steps, "b1" & "b2"'  # and the page escape it
failures, REFUSALS = [], []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")
    return ok


def grade(minute, task, status, test="", hint="", level=0, counts=None):
    """One line of a grades.csv as a list of fields."""
    score = "1" if status == "pass" else "0"
    passed, failed = counts if counts else (("12", "0") if status == "pass" else ("11", "1"))
    if status in ("hint", "crash"):
        passed = failed = ""
    time = (START + datetime.timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [time, task, score, passed, failed, status, test, hint, str(level), "GNU 12.2.0",
            "Linux"]


def write_grades(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.write(HEADER + "\r\n")
        csv.writer(f).writerows(rows)


def student(name, rows, files):
    """A student's repository WORK/room/NAME: students/grades.csv and the task files FILES
    ({task: the word the fake regrade reads})."""
    repo = os.path.join(WORK, "room", name)
    write_grades(os.path.join(repo, "students", "grades.csv"), rows)
    for task, word in files.items():
        os.makedirs(os.path.join(repo, "students", "tasks"), exist_ok=True)
        with open(os.path.join(repo, "students", "tasks", f"{task}.cpp"), "w") as f:
            f.write(f"// a student's {task}\n// fake-regrade: {word}\n")
    return repo


FAKE = r'''#!/usr/bin/env python3
# The test's stand-in for scripts/grade.sh --grade-file TASK FILE --report CSV: grades FILE by
# its "fake-regrade: WORD" line and appends one line (and the header when CSV is new).
import datetime, os, sys
task, file, flag, report = sys.argv[1:]
with open(os.environ["FAKE_CALLS"], "a") as log:
    log.write(f"{task} {file} {flag} {os.getcwd()}\n")
word = [l.split(": ")[1].strip() for l in open(file) if "fake-regrade: " in l][0]
score, passed, failed, test = {"pass": ("1", "12", "0", ""),
                               "fail": ("0", "9", "3", "rope: relative property")}[word]
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
new = not os.path.exists(report)
with open(report, "a") as f:
    if new:
        f.write("HEADER\n")
    f.write(f"{now},{task},{score},{passed},{failed},{word},{test},,0,GNU 12.2.0,Linux\n")
'''


def run(args, env=None, cwd=WORK):
    try:
        done = subprocess.run(args, cwd=cwd, env={**os.environ, **(env or {})},
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=120)
    except subprocess.TimeoutExpired:
        return None, "", f"{args[0]} still ran after 120 s"
    return done.returncode, done.stdout, done.stderr


def refused(name, args, must_name, env=None, cwd=WORK):
    """ARGS exit 2 with one line on stderr that holds every string of MUST_NAME."""
    REFUSALS.append(name)
    rc, _, err = run(args, env, cwd)
    lines = err.strip().splitlines()
    if check(rc == 2 and len(lines) == 1 and "Traceback" not in err,
             f"{name}: exit {rc} and {len(lines)} line(s) on stderr (want 2 and one): {err[:300]}"):
        for word in must_name:
            check(word in lines[0], f"{name}: the line does not name '{word}': {lines[0]}")


def png_colours(path):
    """(width, height, the set of its (r, g, b) colours) of the 8-bit RGB or RGBA PNG at PATH:
    its IDAT chunks inflated with zlib, each row's filter undone."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("no PNG signature")
    width, height, depth, kind = struct.unpack(">IIBB", data[16:26])
    if depth != 8 or kind not in (2, 6):
        raise ValueError(f"depth {depth}, colour type {kind} (want 8-bit RGB or RGBA)")
    idat, at = b"", 8
    while at < len(data):
        length, name = struct.unpack(">I4s", data[at:at + 8])
        if name == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    raw = zlib.decompress(idat)
    bpp = 3 if kind == 2 else 4
    stride, colours, previous = width * bpp, set(), bytearray(width * bpp)
    for y in range(height):
        start = y * (stride + 1)
        kind_of_filter, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0  # left, up, up-left
            b, c = previous[i], previous[i - bpp] if i >= bpp else 0
            if kind_of_filter == 1:
                line[i] = (line[i] + a) & 255
            elif kind_of_filter == 2:
                line[i] = (line[i] + b) & 255
            elif kind_of_filter == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind_of_filter == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        previous = line
    return width, height, colours


def read_table(out):
    with open(os.path.join(out, "class.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {(r["student"] or "class", r["task"]): r for r in rows}


# ---- the room ---------------------------------------------------------------------------------
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
ada = [grade(0, "rope_forward", "fail", NORMS, "rope_forward.norms"),
       grade(10, "rope_forward", "pass"), grade(20, "rope_forward", "pass")]
ada += [grade(30 + 5 * i, task, "pass") for i, task in enumerate(TASKS[1:])]
student("ada", ada, {task: "pass" for task in TASKS})
bo = [grade(0, "rope_forward", "fail", RELATIVE, "rope_forward.relative"),
      grade(5, "rope_forward", "fail", RELATIVE, "rope_forward.relative"),
      grade(6, "rope_forward", "hint", "", "rope_forward.relative", 1),
      grade(10, "rope_forward", "fail", RELATIVE, "rope_forward.relative", 1),
      grade(12, "rope_forward", "hint", "", "rope_forward.relative", 2),
      grade(15, "rope_forward", "fail", RELATIVE, "rope_forward.relative", 2),
      grade(17, "rope_forward", "hint", "", "rope_forward.relative", 3),
      grade(20, "rope_forward", "fail", RELATIVE, "rope_forward.relative", 3),
      grade(25, "rope_forward", "fail", "rope: the naive matrix", "rope_forward.transposed", 3),
      grade(40, "softmax_backward", "hint", "", "softmax_backward.sum", 1)]
student("bo", bo, {"rope_forward": "fail"})
cy = [grade(0, "rope_forward", "fail", RELATIVE, "rope_forward.relative"),
      grade(10, "rope_forward", "fail", RELATIVE, "rope_forward.relative"),
      grade(12, "rope_forward", "hint", "", "rope_forward.relative", 1)[:2] + [""] +
      grade(12, "rope_forward", "hint", "", "rope_forward.relative", 1)[3:],  # no score
      grade(20, "rope_forward", "fail", NORMS, "rope_forward.norms", 1),
      grade(30, "rope_forward", "pass", level=1),
      grade(40, "softmax_backward", "pass"),
      grade(50, "adamw_step", "crash", STEPS)]
student("cy", cy, {"rope_forward": "fail", "softmax_backward": "pass", "adamw_step": "pass"})
# dee: only the file, collected into a folder of her name; the pass (minute 15) was appended
# before the six failures (minutes 0 to 10): a merge on two machines.
dee = [grade(2 * i, "rope_forward", "fail", "rope: in place", "rope_forward.inplace")
       for i in range(6)]
dee = dee[:3] + [grade(15, "rope_forward", "pass")] + dee[3:]
write_grades(os.path.join(WORK, "collected", "dee", "grades.csv"), dee)
with open(os.path.join(WORK, "fake_regrade.py"), "w") as f:
    f.write(FAKE.replace("HEADER", HEADER))
CALLS = os.path.join(WORK, "calls.txt")
ENV = {"RF_CLASS_REGRADE": f"{sys.executable} {os.path.join(WORK, 'fake_regrade.py')}",
       "FAKE_CALLS": CALLS}
ROOM = ["room/ada", "room/bo", "room/cy", "collected/dee/grades.csv"]  # relative to WORK

if BROWSER:
    if not os.access("/usr/bin/chromium", os.X_OK):
        print("SKIP: /usr/bin/chromium is missing (scripts/setup.sh --all installs it)")
        sys.exit(77)
    rc, _, err = run([GRADE, "--class", "out", *ROOM], ENV)
    check(rc == 0, f"grade.sh --class exited {rc}: {err[-400:]}")
    page = os.path.join(WORK, "out", "class.html")
    shot = os.path.join(WORK, "class.png")
    rc, _, err = run(["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                      "--hide-scrollbars", f"--user-data-dir={os.path.join(WORK, 'profile')}",
                      f"--screenshot={shot}", "--window-size=1200,900", f"file://{page}"])
    if not check(rc == 0 and os.path.isfile(shot),
                 f"chromium exited {rc}, no {shot}: {err[-400:]}"):
        sys.exit(1)
    try:
        width, height, colours = png_colours(shot)
    except (ValueError, zlib.error, struct.error) as e:
        check(False, f"{shot} cannot be read as a PNG: {e}")
        sys.exit(1)
    check((width, height) == (1200, 900), f"the screenshot is {width}×{height}, not 1200×900")
    check(len(colours) > 1, "the screenshot is blank (one colour)")
    # The page's own colours: solved cells (#b9e4bd) and the flagged regrade (#f4a6a6).
    for name, rgb in (("a solved cell's green", (0xb9, 0xe4, 0xbd)),
                      ("the mismatch red", (0xf4, 0xa6, 0xa6))):
        check(any(all(abs(x - y) <= 3 for x, y in zip(col, rgb)) for col in colours),
              f"the screenshot shows no pixel of {name} #{bytes(rgb).hex()} "
              f"({len(colours)} colours)")
    if not failures:
        print(f"class_table_browser: PASS (a 1200×900 screenshot of {len(colours)} colours, the "
              "table's green and red among them)")
    sys.exit(1 if failures else 0)

# ---- the table ---------------------------------------------------------------------------------
# Through grade.sh, with OUT and the DIRs named from where the instructor stands (WORK).
rc, out, err = run([GRADE, "--class", "out", *ROOM], ENV)
if not check(rc == 0, f"grade.sh --class exited {rc}: {err[-400:]}"):
    sys.exit(1)
t = read_table(os.path.join(WORK, "out"))
check(len(t) == len(TASKS) * 5, f"class.csv has {len(t)} rows, not {len(TASKS) * 5}")


def expect(key, **want):
    row = t.get(key)
    if not check(row is not None, f"class.csv has no row {key}"):
        return
    for column, value in want.items():
        check(row[column] == str(value), f"{key} {column}: '{row[column]}', not '{value}'")


# rope_forward: ada 2 attempts/10 min, cy 4/30, dee 7/15 (in time order): medians 4 and 15.
expect(("class", "rope_forward"), tried=4, solved=3, attempts_to_pass=4, minutes_to_pass=15,
       top_failing_test=RELATIVE, top_failing_test_lines=7, top_hint_id="rope_forward.relative",
       top_hint_id_lines=7, deepest_hint=3, mismatch=1)
expect(("class", "rope_backward"), tried=1, solved=1, attempts_to_pass=1, minutes_to_pass=0,
       top_failing_test="", mismatch=0)
expect(("class", "softmax_backward"), tried=2, solved=2, deepest_hint=1, mismatch=0)
expect(("class", "adamw_step"), tried=2, solved=1, top_failing_test=STEPS,
       top_failing_test_lines=1, mismatch=1)
expect(("ada", "rope_forward"), tried=1, solved=1, attempts=3, attempts_to_pass=2,
       minutes_to_pass=10, top_failing_test=NORMS, deepest_hint=0, last_report="pass",
       regrade="pass", mismatch="no")
expect(("bo", "rope_forward"), tried=1, solved=0, attempts=6, attempts_to_pass="",
       top_failing_test=RELATIVE, top_failing_test_lines=5, deepest_hint=3, last_report="fail",
       regrade="fail", mismatch="no")
expect(("bo", "softmax_backward"), tried=0, attempts=0, deepest_hint=1, last_report="none",
       regrade="not submitted", mismatch="")
expect(("cy", "rope_forward"), solved=1, attempts=4, attempts_to_pass=4, minutes_to_pass=30,
       last_report="pass", regrade="fail", mismatch="yes")
expect(("cy", "adamw_step"), solved=0, last_report="crash", regrade="pass", mismatch="yes")
expect(("cy", "mlm_masking"), tried=0, regrade="not submitted", mismatch="")
expect(("dee", "rope_forward"), solved=1, attempts=7, attempts_to_pass=7, minutes_to_pass=15,
       regrade="not submitted", mismatch="")
calls = open(CALLS).read().splitlines()
check(len(calls) == 10, f"the regrade ran {len(calls)} times, not 10 (ada 6, bo 1, cy 3)")
cy_file = os.path.join(WORK, "room", "cy", "students", "tasks", "rope_forward.cpp")
want = f"rope_forward {cy_file} --report {ROOT}"
check(want in calls, f"no regrade call '{want}' (TASK, the file's full path, --report, in the "
      f"course's root): {calls[:2]}")
check("rope_forward" in out and "1 regrade(s) disagree" in out, f"the summary: {out}")

page = open(os.path.join(WORK, "out", "class.html"), encoding="utf-8").read()
for bad in ("<script", "http://", "https://", "src=", "<link", "@import"):
    check(bad not in page.lower(), f"class.html is not self-contained: it holds '{bad}'")
for word in ("ada", "bo", "cy", "dee", RELATIVE, "⚠", "made ",
             "adamw: several steps, &quot;b1&quot; &amp; &quot;b2&quot;"):
    check(word in page, f"class.html does not show '{word}'")

# Again into the same OUT: its own files are replaced. --no-regrade: nothing is regraded.
rc, _, err = run(TABLE + ["out", "--no-regrade", *ROOM], ENV)
if not check(rc == 0, f"a second --class --no-regrade exited {rc}: {err[-300:]}"):
    sys.exit(1)
t = read_table(os.path.join(WORK, "out"))
expect(("cy", "rope_forward"), regrade="not regraded", mismatch="")
expect(("dee", "rope_forward"), regrade="not submitted")
expect(("class", "rope_forward"), solved=3, mismatch="")
check(len(open(CALLS).read().splitlines()) == 10, "--no-regrade ran the regrade")

# A regrade that writes no line: the table is written, one line names it, exit 1.
rc, _, err = run(TABLE + ["broken", "room/bo"], {"RF_CLASS_REGRADE": "true"})
check(rc == 1 and "bo's rope_forward" in err and "wrote no report" in err,
      f"a regrade that writes nothing: exit {rc}: {err[-300:]}")
check(os.path.isfile(os.path.join(WORK, "broken", "class.csv")),
      "no class.csv after a broken regrade")

# ---- refusals: one line naming the file (and line), exit 2 ---------------------------------------
os.makedirs(os.path.join(WORK, "nobody"))
refused("a DIR without grades.csv", TABLE + ["bad", "room/ada", "nobody"],
        ["nobody", "students/grades.csv"], ENV)
lines = [grade(0, "rope_forward", "fail", "rope: a name\nover two lines"),
         grade(5, "rope_forward", "pass")]
lines[1][2] = "2"
write_grades(os.path.join(WORK, "malformed", "students", "grades.csv"), lines)
refused("a score of 2 after a name over two lines",
        TABLE + ["bad", "--no-regrade", "malformed"],
        ["malformed/students/grades.csv:4:", "score '2'"])
os.makedirs(os.path.join(WORK, "short"))
with open(os.path.join(WORK, "short", "grades.csv"), "w") as f:
    f.write(HEADER + "\n" + ",".join(grade(0, "rope_forward", "pass")[:10]) + "\n")
refused("a line of 10 fields", TABLE + ["bad", "--no-regrade", "short/grades.csv"],
        ["short/grades.csv:2:", "10 fields"])
for name, text, where in (
        ("no header", ",".join(grade(0, "rope_forward", "pass")) + "\n", ":1:"),
        ("an unknown task", HEADER + "\n" + ",".join(grade(0, "rope_fwd", "pass")) + "\n",
         "rope_fwd"),
        ("a bad time",
         HEADER + "\n" + ",".join(["2026-12-07 20:30"] + grade(0, "rope_forward", "pass")[1:])
         + "\n",
         "time_utc"),
        ("an unclosed quote",
         HEADER + "\n" + ",".join(grade(0, "rope_forward", "pass")) + '\n"x,\n', ":3:"),
        ("a conflict marker", HEADER + "\n<<<<<<< HEAD\n", ":2:")):
    folder = os.path.join(WORK, "bad_" + name.replace(" ", "_"))
    os.makedirs(os.path.join(folder, "students"))
    with open(os.path.join(folder, "students", "grades.csv"), "w") as f:
        f.write(text)
    refused(name, TABLE + ["bad", "--no-regrade", folder], [folder, where])
os.makedirs(os.path.join(WORK, "twice", "ada", "students"))
shutil.copy(os.path.join(WORK, "room", "ada", "students", "grades.csv"),
            os.path.join(WORK, "twice", "ada", "students"))
refused("two students of one name", TABLE + ["bad", "room/ada", "twice/ada"],
        ["'ada'", "twice/ada"], ENV)
refused("no DIR", TABLE + ["bad"], ["usage"])
rc, out, _ = run([GRADE, "--class", "--help"])
check(rc == 0 and "OUT/class.html" in out, f"grade.sh --class --help: exit {rc}: {out[:200]}")
refused("a regrade command that does not exist", TABLE + ["bad", "room/ada"],
        ["RF_CLASS_REGRADE", "no-such-command"], {"RF_CLASS_REGRADE": "no-such-command --x"})
os.makedirs(os.path.join(WORK, "mine"))
with open(os.path.join(WORK, "mine", "class.html"), "w") as f:
    f.write("my own notes\n")
refused("a user's class.html at OUT", TABLE + ["mine", "room/ada"],
        ["mine/class.html", "move it away"], ENV)
check(open(os.path.join(WORK, "mine", "class.html")).read() == "my own notes\n",
      "the user's class.html was changed")
check(not os.path.exists(os.path.join(WORK, "mine", "class.csv")), "class.csv was written beside "
      "a user's class.html (both must be checked first)")
# In a handout (students/handout.txt), --class refuses like --check.
handout = os.path.join(WORK, "handout")
os.makedirs(os.path.join(handout, "scripts"))
os.makedirs(os.path.join(handout, "students"))
shutil.copy(GRADE, os.path.join(handout, "scripts", "grade.sh"))
shutil.copy(os.path.join(ROOT, "students", "tasks.txt"), os.path.join(handout, "students"))
with open(os.path.join(handout, "students", "handout.txt"), "w") as f:
    f.write("rope_forward\n")
refused("--class in a handout", [os.path.join(handout, "scripts", "grade.sh"), "--class", "bad",
                                  os.path.join(WORK, "room", "ada")],
        ["this is a handout", "--class"])
check(not os.path.exists(os.path.join(WORK, "bad")), "a refused --class left an OUT folder")

if not failures:
    print("class_table: PASS (solved counts, medians, the most common failing test and hint, "
          f"the regrade's mismatch flags, --no-regrade, a broken regrade and {len(REFUSALS)} "
          "refusals)")
sys.exit(1 if failures else 0)
