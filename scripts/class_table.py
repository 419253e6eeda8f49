#!/usr/bin/env python3
"""The instructor's class table: what a room of students did with the graded tasks.

    scripts/grade.sh --class OUT DIR... [--no-regrade] [--force]
    (the same as: scripts/class_table.py OUT DIR... [--no-regrade] [--force])

Each DIR is a student's repository (its students/grades.csv, the lines scripts/grade.sh
appends, one per grade) or a grades.csv file itself. The student's name is DIR's name, or the
name of the file's folder (of the repository for REPO/students/grades.csv). Writes:
  OUT/class.csv   one row per task for the class (row = class) and one per student and task
                  (row = student); docs/graded-tasks.md says what each column means
  OUT/class.html  the same for a projector: one small page, no scripts, no network
Every student's students/tasks/TASK.cpp is graded again with the course's own tests:
$RF_CLASS_REGRADE TASK FILE --report CSV (default: scripts/grade.sh --grade-file, run from the
course's root), which appends one line to CSV; the table shows it beside the student's own last
report and flags the two when they disagree. --no-regrade skips it. OUT is made when its folder
exists; the two files replace only what this script wrote (scripts/script_outputs.py; --force:
also after they were edited). A missing grades.csv, a damaged line: one line naming the file
and line, exit 2. A regrade that writes no line: the table is written, then one line per such
regrade, exit 1. Not shipped in a handout (scripts/grade.sh --class refuses there).
"""
import csv
import datetime
import html
import io
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

from script_outputs import Refusal, check_text_replaceable, write_text  # the outputs' rule

OWNER = "roformer-cpp scripts/class_table.py"  # the name in OUT/<file>.written-by
USAGE = ("usage: scripts/grade.sh --class OUT DIR... [--no-regrade] [--force] "
         "(see scripts/class_table.py)")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS_FILE = os.path.join(ROOT, "students", "tasks.txt")
HEADER = ["time_utc", "task", "score", "passed", "failed", "status", "failing_test", "hint_id",
          "hint_level", "compiler", "os"]
# The statuses of a grade (an attempt); any other status (such as `hint`, a student's ask for a
# deeper hint) counts only for the hint level.
ATTEMPT = {"pass", "fail", "compile", "crash", "timeout", "output", "early_exit", "killed",
           "tampered"}
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
COLUMNS = ["row", "task", "student", "tried", "solved", "attempts", "attempts_to_pass",
           "minutes_to_pass", "top_failing_test", "top_failing_test_lines", "top_hint_id",
           "top_hint_id_lines", "deepest_hint", "last_report", "regrade", "mismatch"]
DEFAULT_REGRADE = "scripts/grade.sh --grade-file"  # TASK FILE --report CSV, from ROOT
DAMAGED = "fix or delete that line (each line: " + ",".join(HEADER) + ")"


def course_tasks():
    """The task names of students/tasks.txt, in its order."""
    tasks = []
    with open(TASKS_FILE, encoding="utf-8") as f:
        for line in f:
            name, bar, _ = line.partition(" | ")
            if bar and name and all(c.islower() or c == "_" for c in name):
                tasks.append(name)
    return tasks


class Line:
    """One parsed line of a grades.csv."""
    def __init__(self, number, row):
        self.number = number
        for key, value in zip(HEADER, row):
            setattr(self, key, value)
        self.time = datetime.datetime.strptime(row[0], TIME_FORMAT)
        self.level = int(row[8])

    @property
    def attempt(self):
        return self.status in ATTEMPT


def parse_line(path, number, row, tasks):
    """ROW (the record that starts at line NUMBER of PATH) as a Line; Refusal when damaged."""
    where = f"{path}:{number}"
    if len(row) != len(HEADER):
        raise Refusal(f"{where}: {len(row)} fields, not {len(HEADER)}; {DAMAGED}")
    time, task, score, passed, failed, status, _, _, level, _, _ = row
    try:
        datetime.datetime.strptime(time, TIME_FORMAT)
        ok = len(time) == 20
    except ValueError:
        ok = False
    if not ok:
        raise Refusal(f"{where}: time_utc '{short(time)}' is not a time like 2026-12-07T20:30:05Z; "
                      f"{DAMAGED}")
    if task not in tasks:
        raise Refusal(f"{where}: unknown task '{short(task)}' (the tasks: {' '.join(tasks)}); "
                      f"{DAMAGED}")
    if not status or not all(c.islower() or c == "_" for c in status):
        raise Refusal(f"{where}: status '{short(status)}' is not a word such as pass or fail; "
                      f"{DAMAGED}")
    if score not in ("0", "1") and not (score == "" and status not in ATTEMPT):
        raise Refusal(f"{where}: score '{short(score)}' is not 0 or 1; {DAMAGED}")
    for name, value in (("passed", passed), ("failed", failed)):
        if value and not (value.isdigit() and len(value) <= 9):
            raise Refusal(f"{where}: {name} '{short(value)}' is not a count of test cases; "
                          f"{DAMAGED}")
    if not (level.isdigit() and len(level) <= 2):
        raise Refusal(f"{where}: hint_level '{short(level)}' is not a level (0: no hint, 1, 2, "
                      f"…); {DAMAGED}")
    return Line(number, row)


def short(text, limit=40):
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


def read_grades(path, tasks, header_needed=True):
    """The Lines of the grades.csv at PATH, in file order."""
    if not os.path.isfile(path):
        raise Refusal(f"{path} is not a regular file; give a student's repository or its "
                      "students/grades.csv")
    lines = []
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f, strict=True)
            first = True
            while True:
                start = reader.line_num + 1
                try:
                    row = next(reader)
                except StopIteration:
                    break
                except csv.Error as e:
                    raise Refusal(f"{path}:{start}: not a CSV line ({e}); {DAMAGED}") from None
                if first and row == HEADER:
                    first = False
                    continue
                if first and header_needed:
                    raise Refusal(f"{path}:1: the first line is not the header "
                                  f"{','.join(HEADER)}; restore it")
                first = False
                if not row:
                    raise Refusal(f"{path}:{start}: a blank line; delete it")
                lines.append(parse_line(path, start, row, tasks))
    except UnicodeDecodeError:
        raise Refusal(f"{path} is not UTF-8 text; give the grades.csv that scripts/grade.sh "
                      "wrote") from None
    except OSError as e:
        raise Refusal(f"cannot read {path} ({e.strerror}); check its permissions") from None
    return lines


class Student:
    def __init__(self, name, repo, grades):
        self.name, self.repo, self.grades = name, repo, grades
        self.lines = []
        self.regrades = {}  # task → Regrade


def find_students(dirs):
    """A Student per DIR argument: its name, repository folder and grades.csv."""
    students, seen = [], {}
    for d in dirs:
        if not d:
            raise Refusal("a DIR argument is empty; name a student's repository or grades.csv")
        path = os.path.abspath(d)
        if os.path.isdir(path):
            grades = os.path.join(path, "students", "grades.csv")
            if not os.path.lexists(grades):
                raise Refusal(f"{d} holds no students/grades.csv; give a student's "
                              "repository (with the grades.csv that scripts/grade.sh writes) "
                              "or the file itself")
            repo = path
        elif not os.path.lexists(path):
            raise Refusal(f"{d} does not exist; give a student's repository or a grades.csv")
        elif not os.path.isfile(path):
            raise Refusal(f"{d} is neither a folder nor a regular file; give a student's "
                          "repository or a grades.csv")
        else:
            grades, repo = path, os.path.dirname(path)
            if os.path.basename(repo) == "students":  # REPO/students/grades.csv
                repo = os.path.dirname(repo)
        name = os.path.basename(repo) or repo
        if name in seen:
            raise Refusal(f"two students named '{name}' ({seen[name]} and {d}); put each "
                          "student's repository in a folder of its own name")
        seen[name] = d
        students.append(Student(name, repo, grades))
    return students


class Regrade:
    """The course's grade of a student's task file: a Line, or a word (not submitted, …)."""
    def __init__(self, line=None, word="", problem=""):
        self.line, self.word, self.problem = line, word, problem

    def text(self):
        return self.line.status if self.line else self.word


REPORTS = [0]  # the regrades so far: each writes a report of its own


def regrade(student, task, tasks, command, scratch):
    """Grades STUDENT's students/tasks/TASK.cpp with COMMAND (None: not regraded)."""
    file = os.path.join(student.repo, "students", "tasks", f"{task}.cpp")
    if not os.path.isfile(file):
        return Regrade(word="not submitted")
    if command is None:
        return Regrade(word="not regraded")
    REPORTS[0] += 1
    report = os.path.join(scratch, f"report{REPORTS[0]}.csv")
    argv = command + [task, file, "--report", report]
    try:
        done = subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    except OSError as e:
        raise Refusal(f"RF_CLASS_REGRADE: cannot run {shlex.join(command)} ({e.strerror}); "
                      f"set it to the regrade command (default: {DEFAULT_REGRADE})") from None
    said = done.stdout.decode("utf-8", "replace").strip().splitlines()
    said = f": {short(said[-1], 120)}" if said else ""
    problem = f"regrading {student.name}'s {task} ({shlex.join(argv)})"
    ended = f"exit {done.returncode}"
    if not os.path.isfile(report):
        return Regrade(word="error", problem=f"{problem} wrote no report ({ended}){said}")
    try:
        lines = read_grades(report, tasks, header_needed=False)
    except Refusal as e:
        return Regrade(word="error", problem=f"{problem} wrote a damaged report: {e}")
    if not lines or lines[-1].task != task:
        return Regrade(word="error", problem=f"{problem} wrote no line for {task} ({ended}){said}")
    return Regrade(line=lines[-1])


def most_common(values):
    """(value, count) of the most frequent non-empty VALUES (ties: the first in sort order)."""
    counts = {}
    for v in values:
        if v:
            counts[v] = counts.get(v, 0) + 1
    if not counts:
        return "", 0
    best = min(counts, key=lambda v: (-counts[v], v))
    return best, counts[best]


def number(x):
    """A median or a count of minutes as text: 3, 2.5, 12.3."""
    x = round(x, 1)
    return str(int(x)) if x == int(x) else f"{x:.1f}"


def cell(student, task):
    """STUDENT's row for TASK: a dict of COLUMNS plus the numbers the class row needs."""
    mine = sorted((l for l in student.lines if l.task == task), key=lambda l: l.time)
    attempts = [l for l in mine if l.attempt]
    failing = [l for l in attempts if l.score == "0"]
    first_pass = next((i for i, l in enumerate(attempts) if l.score == "1"), None)
    test, test_lines = most_common(l.failing_test for l in failing)
    hint, hint_lines = most_common(l.hint_id for l in failing)
    last = attempts[-1] if attempts else None
    again = student.regrades.get(task)
    mismatch = ""
    if last is not None and again is not None and again.line is not None:
        mismatch = "yes" if last.score != again.line.score else "no"
    row = {"row": "student", "task": task, "student": student.name,
           "tried": int(bool(attempts)), "solved": int(first_pass is not None),
           "attempts": len(attempts), "attempts_to_pass": "", "minutes_to_pass": "",
           "top_failing_test": test, "top_failing_test_lines": test_lines or "",
           "top_hint_id": hint, "top_hint_id_lines": hint_lines or "",
           "deepest_hint": max((l.level for l in mine), default=0),
           "last_report": last.status if last else "none",
           "regrade": again.text() if again else "", "mismatch": mismatch}
    extra = {"failing": failing, "lines": mine}
    if first_pass is not None:
        extra["to_pass"] = first_pass + 1
        extra["minutes"] = (attempts[first_pass].time - attempts[0].time).total_seconds() / 60
        row["attempts_to_pass"] = extra["to_pass"]
        row["minutes_to_pass"] = number(extra["minutes"])
    return row, extra


def class_row(task, cells):
    """The class's row for TASK from its students' (row, extra) pairs."""
    solvers = [x for r, x in cells if r["solved"]]
    failing = [l for _, x in cells for l in x["failing"]]
    test, test_lines = most_common(l.failing_test for l in failing)
    hint, hint_lines = most_common(l.hint_id for l in failing)
    median = (lambda key: number(statistics.median(x[key] for x in solvers)) if solvers else "")
    return {"row": "class", "task": task, "student": "",
            "tried": sum(r["tried"] for r, _ in cells), "solved": len(solvers),
            "attempts": sum(r["attempts"] for r, _ in cells),
            "attempts_to_pass": median("to_pass"), "minutes_to_pass": median("minutes"),
            "top_failing_test": test, "top_failing_test_lines": test_lines or "",
            "top_hint_id": hint, "top_hint_id_lines": hint_lines or "",
            "deepest_hint": max((l.level for _, x in cells for l in x["lines"]), default=0),
            "last_report": "", "regrade": "",
            "mismatch": sum(r["mismatch"] == "yes" for r, _ in cells)
            if any(r["mismatch"] for r, _ in cells) else ""}


# ---- the page ---------------------------------------------------------------------------------
STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; font-size: 18px; margin: 16px;
       color: #111; background: #fff; }
h1 { font-size: 30px; margin: 0 0 4px 0; }
h2 { font-size: 24px; margin: 28px 0 8px 0; }
p.made { color: #444; margin: 0 0 12px 0; }
table { border-collapse: collapse; }
th, td { border: 2px solid #888; padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #dde3ea; font-size: 17px; }
td.test { min-width: 10em; }
td.n { text-align: right; }
td.solved { background: #b9e4bd; }
td.tried { background: #ffe2a8; }
td.none { background: #eeeeee; color: #555; }
td.mismatch { background: #f4a6a6; font-weight: bold; }
span.small { font-size: 16px; color: #333; }
"""


def esc(value):
    return html.escape(str(value).replace("\n", " "))


def counted(value, count):
    return f"{esc(value)} <span class=small>({count}×)</span>" if value else "—"


def render_html(tasks, students, rows, made, regraded):
    """class.html's text."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>Graded tasks: the class</title>", f"<style>{STYLE}</style></head><body>",
           "<h1>Graded tasks: the class</h1>",
           f'<p class=made>{len(students)} students · made {made} UTC by scripts/grade.sh --class'
           f'{"" if regraded else " --no-regrade"}</p>',
           "<h2>Per task</h2><table><tr><th>task</th><th>solved / tried</th>"
           "<th>attempts to pass (median)</th><th>minutes to pass (median)</th>"
           "<th>most common failing test</th><th>most common hint</th><th>deepest hint</th>"
           "<th>regrade ⚠</th></tr>"]
    for task in tasks:
        r = rows[("class", task)]
        out.append(f"<tr><td>{esc(task)}</td><td class=n>{r['solved']} / {r['tried']}</td>"
                   f"<td class=n>{r['attempts_to_pass'] or '—'}</td>"
                   f"<td class=n>{r['minutes_to_pass'] or '—'}</td>"
                   f"<td class=test>{counted(r['top_failing_test'], r['top_failing_test_lines'])}"
                   "</td>"
                   f"<td>{counted(r['top_hint_id'], r['top_hint_id_lines'])}</td>"
                   f"<td class=n>{r['deepest_hint'] or '—'}</td>"
                   f"<td class=\"n{' mismatch' if r['mismatch'] else ''}\">{r['mismatch']}"
                   "</td></tr>")
    out.append("</table>")
    head = "".join(f"<th>{esc(t).replace('_', '_<wbr>')}</th>" for t in tasks)
    out.append("<h2>Students: ✓ solved · attempts · deepest hint</h2>"
               f"<table><tr><th>student</th>{head}</tr>")
    for s in students:
        out.append(f"<tr><td>{esc(s.name)}</td>")
        for task in tasks:
            r = rows[(s.name, task)]
            hint = f" · hint {r['deepest_hint']}" if r["deepest_hint"] else ""
            if not r["tried"]:
                out.append(f"<td class=none>–{hint}</td>")
                continue
            mark, kind = ("✓", "solved") if r["solved"] else ("✗", "tried")
            out.append(f"<td class={kind}>{mark} {r['attempts']}{hint}</td>")
        out.append("</tr>")
    out.append("</table>")
    out.append("<h2>Regrade: the student's last report → the course's tests</h2>"
               f"<table><tr><th>student</th>{head}</tr>")
    for s in students:
        out.append(f"<tr><td>{esc(s.name)}</td>")
        for task in tasks:
            r = rows[(s.name, task)]
            kind = {"yes": "mismatch", "no": "solved" if r["regrade"] == "pass" else "tried"}.get(
                r["mismatch"], "none")
            flag = " ⚠ disagree" if r["mismatch"] == "yes" else ""
            report = "–" if r["last_report"] == "none" else esc(r["last_report"])
            again = "–" if r["regrade"] == "not submitted" else esc(r["regrade"])
            text = "–" if report == again == "–" else f"{report} → {again}{flag}"
            out.append(f"<td class={kind}>{text}</td>")
        out.append("</tr>")
    out.append("</table><p class=made>–: no grade reported, no task file. Per task: the "
               "medians over those who solved it; the most common failing test and hint over "
               "every failing grade of the room (how many); a disagreement: the student's last "
               "report and the regrade with the course's tests differ.</p></body></html>")
    return "\n".join(out) + "\n"


def render_csv(tasks, students, rows):
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=COLUMNS)
    w.writeheader()
    for task in tasks:
        w.writerow(rows[("class", task)])
    for s in students:
        for task in tasks:
            w.writerow(rows[(s.name, task)])
    return text.getvalue()


def main(argv):
    if argv[1:] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    force = "--force" in argv[1:]
    no_regrade = "--no-regrade" in argv[1:]
    args = [a for a in argv[1:] if a not in ("--force", "--no-regrade")]
    if len(args) < 2 or any(a.startswith("--") for a in args):
        print(f"class_table: {USAGE}", file=sys.stderr)
        return 2
    out, dirs = args[0], args[1:]
    outputs = [os.path.join(out, "class.csv"), os.path.join(out, "class.html")]
    problems = []
    try:
        if not out:
            raise Refusal("OUT is empty; name the folder for class.csv and class.html")
        if os.path.lexists(out) and (os.path.islink(out) or not os.path.isdir(out)):
            raise Refusal(f"OUT {out} exists and is not a folder; pick a folder for class.csv "
                          "and class.html")
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent):
            raise Refusal(f"the folder {parent} for OUT does not exist; create it (mkdir -p "
                          f"{parent}) or pick another OUT")
        if os.path.isdir(out):
            for path in outputs:  # both checked before any work
                check_text_replaceable(path, OWNER, force)
        command = None
        if not no_regrade:
            command = shlex.split(os.environ.get("RF_CLASS_REGRADE", DEFAULT_REGRADE))
            if not command:
                raise Refusal(f"RF_CLASS_REGRADE is empty; unset it ({DEFAULT_REGRADE}) or "
                              "pass --no-regrade")
        tasks = course_tasks()
        students = find_students(dirs)
        for s in students:
            s.lines = read_grades(s.grades, tasks)
        with tempfile.TemporaryDirectory(prefix="class_table.") as scratch:
            for s in students:
                for task in tasks:
                    again = regrade(s, task, tasks, command, scratch)
                    s.regrades[task] = again
                    if again.problem:
                        problems.append(again.problem)
                    if command is not None and again.word != "not submitted":
                        print(f"regraded {s.name} {task}: {again.text()}", flush=True)
        rows = {}
        for task in tasks:
            cells = []
            for s in students:
                r, extra = cell(s, task)
                rows[(s.name, task)] = r
                cells.append((r, extra))
            rows[("class", task)] = class_row(task, cells)
        made = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
        if not os.path.isdir(out):
            os.mkdir(out)
        for path in outputs:
            check_text_replaceable(path, OWNER, force)
        write_text(outputs[0], render_csv(tasks, students, rows), OWNER)
        write_text(outputs[1], render_html(tasks, students, rows, made, command is not None), OWNER)
    except Refusal as e:
        print(f"class_table: {e}", file=sys.stderr)
        return 2
    for task in tasks:
        r = rows[("class", task)]
        print(f"{task:20} solved {r['solved']} of {r['tried']} tried"
              + (f"; {r['mismatch']} regrade(s) disagree" if r["mismatch"] else ""))
    print(f"class_table: wrote {outputs[0]} and {outputs[1]}")
    for p in problems:
        print(f"class_table: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
