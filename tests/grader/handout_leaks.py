#!/usr/bin/env python3
"""The handout's leak check (docs/graded-tasks.md, "The handout"): no file of a handout holds
the answer of a task it hands out.

    tests/grader/handout_leaks.py HANDOUT [TASK...]      (default: the tasks of its
                                                         students/handout.txt)

Run from the full repository (it reads our answers there). For each task, the answer is
  - our implementation (the task's marked region of the file field 2 of students/tasks.txt
    names): its statements, comments dropped,
    token-normalised (whitespace and line breaks do not count). A statement the task's stub
    also holds (the signature) is no answer; nor is one of fewer than MIN_TOKENS tokens.
    Each is looked for as written (names kept), and two that follow each other in ours found
    within NEAR lines in that order are a leak. A call with constant arguments is looked for
    by its shape: the callee and the constants, every other argument any expression
    (`f(a, b, Real(-1), true)` is found as `f(x.data(), y->data(), Real(-1), true)`), also
    with one constant turned over (`Real(1)` for `Real(-1)`, `false` for `true`: our call
    less one flip, as a demo of the classic bug writes it), and in words: with two constants or more, each named by the callee's parameter as src/ declares
    it (`NAME = VALUE`), all within SPAN characters, comment leaders and markdown dropped;
  - the passages our files mark as its answer (<!-- answer:begin TASK --> … <!-- answer:end -->,
    in any text file of the repository: docs, notebooks, and comments in code; no TASK: any
    task): any run of PROSE_WORDS words of one is looked for, punctuation, markdown and
    comment leaders dropped;
  - the answer said in other words: the lines of tests/grader/answer_ideas.txt for the task
    (left out of a handout), each a regular expression over the prose of a file — its text with
    comment leaders and markdown's ` and * blanked, a line break read as a space, so a sentence
    is found across the lines of a comment or a notebook cell, in code as in docs.
Every text file of the handout is searched except the task's own stub. Each hit prints
`LEAK task: file:line: what` and the exit status is 1; with none, one PASS line. Either way
a line says what was read: how many files and lines of docs, notebooks and code (and of
these, comment lines).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MIN_TOKENS = 8     # a statement shorter than this is too common to be anyone's answer
NEAR = 3           # lines between two consecutive statements of ours found in a file
SPAN = 120         # characters: how close the named constants of our call must stand
PROSE_WORDS = 8    # a copied passage is found by any run of this many of its words
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|->|::|[-+*/<>=!&|]=|&&|\|\||\+\+|--|\S")
LITERAL = re.compile(r"^(\d[\w.]*|true|false|nullptr)$")
MARKED = re.compile(r"<!-- answer:begin ?([a-z_]*) -->(.*?)<!-- answer:end -->", re.S)


def table(repo):
    rows = {}
    with open(os.path.join(repo, "students/tasks.txt"), encoding="utf-8") as f:
        for line in f:
            if re.match(r"^[a-z_]+ [|] ", line):
                fields = line.rstrip("\n").split(" | ")
                rows[fields[0]] = fields
    return rows


def strip_comments(code):
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    return re.sub(r"^\s*#[^\n]*", " ", code, flags=re.M)


def statements(code):
    """The statements of C++ code as token lists, split at ; { }."""
    out, current = [], []
    for token in TOKEN.findall(strip_comments(code)):
        if token in ";{}":
            if current:
                out.append(current)
            current = []
        else:
            current.append(token)
    if current:
        out.append(current)
    return out


def split_args(tokens, start):
    """tokens[start] is '(': the top-level arguments (token lists) and the index after ')'."""
    depth, args, current = 0, [], []
    for k in range(start, len(tokens)):
        t = tokens[k]
        if t in "([":
            depth += 1
            if depth == 1:
                continue
        elif t in ")]":
            depth -= 1
            if depth == 0:
                args.append(current)
                return args, k + 1
        elif t == "," and depth == 1:
            args.append(current)
            current = []
            continue
        current.append(t)
    return None, len(tokens)


CONSTANT_WORDS = {"Real", "float", "double", "int", "long", "size_t", "static_cast", "true",
                  "false", "nullptr"}


def shape(args):
    """A call's arguments, each kept if it is a constant (`true`, `Real(-1)`, `0.5`), else '_'."""
    def constant(a):
        return any(LITERAL.match(t) for t in a) and all(
            t in CONSTANT_WORDS or not re.match(r"^[A-Za-z_]", t) for t in a)
    return tuple(" ".join(a) if constant(a) else "_" for a in args)


def one_flip(got, want):
    """Whether a call's shape is ours but for one constant turned over: its sign
    (`Real(1)` for our `Real(-1)`) or a bool (`false` for our `true`). Such a call beside the
    kernel is our answer with one argument to change (a demo of the classic bug)."""
    if len(got) != len(want) or [g == "_" for g in got] != [w == "_" for w in want]:
        return False
    differ = [(g, w) for g, w in zip(got, want) if g != w]
    if len(differ) != 1:
        return False
    g, w = differ[0]
    return g.replace("- ", "") == w.replace("- ", "") or {g, w} == {"true", "false"}


def region(repo, task, path):
    """Our answer to a task: its marked region of the file that holds it, as
    students/graded_region.cmake (the one reader of the markers) writes it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, task + ".cpp")
        subprocess.run(["cmake", f"-DMODE=ours", f"-DTASK={task}", f"-DIN={os.path.join(repo, path)}",
                        f"-DOUT={out}", "-P", os.path.join(repo, "students/graded_region.cmake")],
                       check=True, capture_output=True)
        return open(out, encoding="utf-8").read()


def answer_code(repo, fields):
    ours = region(repo, fields[0], fields[1])
    stub = open(os.path.join(repo, "students/tasks", fields[0] + ".cpp"), encoding="utf-8").read()
    given = {" ".join(s) for s in statements(stub)}
    exact, calls = [], []
    for s in statements(ours):
        text = " ".join(s)
        if len(s) < MIN_TOKENS or text in given or s[0] == "namespace":
            continue
        exact.append(text)
        k = 0
        while k < len(s) - 1:  # the calls the statement makes, not those inside their arguments
            if re.match(r"^[A-Za-z_]\w*$", s[k]) and s[k + 1] == "(":
                args, after = split_args(s, k + 1)
                # a call with one constant alone is everyday code (the forward's own call of
                # the kernel differs from the backward's by its accumulate flag alone)
                if args and sum(part != "_" for part in shape(args)) >= 2:
                    calls.append((s[k], shape(args)))
                k = after
            else:
                k += 1
    return exact, calls


def parameters(repo, callee):
    """The parameter names of CALLEE as src/ declares it (the first declaration found)."""
    for root, _, files in os.walk(os.path.join(repo, "src")):
        for name in sorted(files):
            if not name.endswith((".hpp", ".h")):
                continue
            tokens = TOKEN.findall(strip_comments(open(os.path.join(root, name), encoding="utf-8").read()))
            for k in range(1, len(tokens) - 1):
                if tokens[k] == callee and tokens[k + 1] == "(" and re.match(r"^[A-Za-z_]", tokens[k - 1]):
                    args, _ = split_args(tokens, k + 1)
                    if args and all(len(a) >= 2 for a in args):
                        return [a[-1] for a in args]
    return None


def spelled(repo, calls):
    """Each call with two or more constant arguments also as a sentence says it: every
    constant named by its parameter (`NAME = VALUE`), all within SPAN characters, as regexes."""
    out = []
    for callee, want in calls:
        names = parameters(repo, callee)
        if not names or len(names) != len(want):
            continue
        named = []
        for name, value in zip(names, want):
            if value == "_":
                continue
            number = re.sub(r"^Real \( (.*) \)$", r"\1", value).replace(" ", "")
            number = "".join("[-−]" if ch == "-" else re.escape(ch) for ch in number)
            named.append(rf"\b{re.escape(name)}\s*=\s*(?:Real\(\s*)?{number}(?![\w.])")
        if len(named) >= 2:
            out.append((f"{callee}: " + ", ".join(n for n, v in zip(names, want) if v != "_"), named))
    return out


def words(text):
    """The words of prose with their offsets: markdown's ` and * dropped, punctuation around
    a word stripped, and tokens with no letter or digit (comment leaders //, #, a dash) left
    out, so a passage reads the same in a doc, a comment or a notebook."""
    text = re.sub(r"[`*]", " ", text)
    found = ((m.group(0).strip("()[],.;:\"'"), m.start()) for m in re.finditer(r"\S+", text))
    return [(w, at) for w, at in found if w and re.search(r"\w", w)]


def repository_files(repo):
    """The text files of the repository to read marked passages from: git's tracked files
    (a checkout's build folders are not ours), or every file when there is no git."""
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True,
                             check=True).stdout.decode("utf-8", "replace")
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for root, dirs, files in os.walk(repo):
            dirs[:] = [d for d in dirs if d != ".git"]
            names += [os.path.relpath(os.path.join(root, n), repo) for n in files]
    return sorted(os.path.join(repo, n) for n in names if os.path.isfile(os.path.join(repo, n)))


MARKED_BY_FILE = {}


def answer_prose(repo, task):
    passages = []
    if not MARKED_BY_FILE:
        for path in repository_files(repo):
            text = readable(path)[0] or ""
            if "answer:begin" in text:
                MARKED_BY_FILE[path] = list(MARKED.finditer(text))
    for found_list in MARKED_BY_FILE.values():
        for found in found_list:
            if found.group(1) in ("", task):
                passages.append([w for w, _ in words(found.group(2))])
    runs = set()
    for w in passages:
        for k in range(len(w) - PROSE_WORDS + 1):
            runs.add(tuple(w[k:k + PROSE_WORDS]))
    return runs


def readable(path):
    """(text, line of each character offset) of a text file; a notebook: its cells' sources."""
    with open(path, "rb") as f:
        raw = f.read()
    if b"\0" in raw[:8192]:
        return None, None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, None
    cells = None
    if path.endswith(".ipynb"):
        try:
            cells = ["".join(c.get("source", [])) for c in json.loads(text).get("cells", [])]
            text = "\n".join(cells)
        except (ValueError, AttributeError):
            cells = None
    return text, cells


def line_of(text, offset, cells=None):
    """file:LINE, or for a notebook (its cells' sources joined) 'cell K line L'."""
    line = text.count("\n", 0, offset) + 1
    if cells is None:
        return str(line)
    for k, cell in enumerate(cells):
        lines = cell.count("\n") + 1
        if line <= lines:
            return f"cell {k} line {line}"
        line -= lines
    return str(line)


IDEAS = "tests/grader/answer_ideas.txt"


def answer_ideas(repo, task):
    """The task's lines of IDEAS ("task | regex | what it says"), compiled."""
    out = []
    path = os.path.join(repo, IDEAS)
    if not os.path.isfile(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(" | ")
            if len(fields) == 3 and fields[0] == task:
                out.append((re.compile(fields[1], re.I), fields[2]))
    return out


def prose_of(text):
    """A file's text as prose: comment leaders at a line's start (//, #, *, >) and markdown's
    ` and * blanked out, each by as many spaces, so that every offset stays that of the text
    (an idea's regular expression writes \\s+ between words: line breaks count as spaces)."""
    text = re.sub(r"(?m)^[ \t]*(?://+|#+|\*|>)", lambda m: " " * len(m.group(0)), text)
    return text.replace("`", " ").replace("*", " ")


def scan(handout, task, exact, calls, sentences, runs, stub, ideas=()):
    hits = []
    for root, dirs, files in os.walk(handout):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, handout)
            if rel == stub:
                continue
            text, cells = readable(path)
            if text is None:
                continue
            spans = [(m.group(0), m.start()) for m in TOKEN.finditer(text)]
            tokens = [t for t, _ in spans]
            joined = " " + " ".join(tokens) + " "
            starts, pos = [], 1
            for t in tokens:
                starts.append(pos)
                pos += len(t) + 1
            # One statement alone may be common code; two that follow each other in ours, found
            # within NEAR lines of each other in that order, are our code (a body of one
            # statement: that one alone).
            where = {}
            for stmt in exact:
                k = joined.find(" " + stmt + " ")
                if k >= 0:
                    where[stmt] = spans[starts.index(k + 1)][1]
            pairs = list(zip(exact, exact[1:])) if len(exact) > 1 else [(exact[0], exact[0])] if exact else []
            for first, second in pairs:
                if first in where and second in where and \
                        0 <= text.count("\n", where[first], where[second]) <= NEAR and \
                        where[first] <= where[second]:
                    hits.append(f"{rel}:{line_of(text, where[first], cells)}: our code: {first}"
                                + (f"; then {second}" if second != first else ""))
                    break
            for callee, want in calls:
                for k, t in enumerate(tokens[:-1]):
                    if t == callee and tokens[k + 1] == "(":
                        args, _ = split_args(tokens, k + 1)
                        if args is None:
                            continue
                        got = shape(args)
                        if got == want:
                            hits.append(f"{rel}:{line_of(text, spans[k][1], cells)}: our call "
                                        f"{callee}({', '.join(want)})")
                        elif one_flip(got, want):
                            hits.append(f"{rel}:{line_of(text, spans[k][1], cells)}: our call with "
                                        f"one argument flipped, {callee}({', '.join(got)})")
            # the constants of our call, named, within one stretch of prose (comment leaders
            # and markdown dropped)
            prose = re.sub(r"(?m)^[ \t]*(//+|#+|\*)", " ", text.replace("`", " "))
            for label, named in sentences:
                first = re.search(named[0], prose)
                while first:
                    window = prose[max(0, first.start() - SPAN):first.end() + SPAN]
                    if all(re.search(n, window) for n in named[1:]):
                        hits.append(f"{rel}:{line_of(prose, first.start(), cells)}: our call in words "
                                    f"({label}): {' '.join(prose[first.start():first.end() + 40].split())}")
                        break
                    first = re.search(named[0], prose[first.end():]) and \
                        re.compile(named[0]).search(prose, first.end())
            if runs:
                spots = words(text)
                for k in range(len(spots) - PROSE_WORDS + 1):
                    if tuple(w for w, _ in spots[k:k + PROSE_WORDS]) in runs:
                        sentence = " ".join(w for w, _ in spots[k:k + PROSE_WORDS])
                        hits.append(f"{rel}:{line_of(text, spots[k][1], cells)}: an answer passage: {sentence}")
                        break
            if ideas:
                flat = prose_of(text)
                for idea, said in ideas:
                    for m in idea.finditer(flat):
                        hits.append(f"{rel}:{line_of(text, m.start(), cells)}: the answer in words "
                                    f"({said}): {' '.join(flat[m.start():m.end()].split())[:120]}")
    return hits


CODE = (".cpp", ".hpp", ".h", ".py", ".sh", ".js", ".html", ".cmake", ".toml", ".txt")


def read_summary(handout):
    """What the scan reads, counted: files and lines of docs (*.md), notebooks (their cells),
    and code and other text, with the comment lines among the code's."""
    counts = {"docs": [0, 0], "notebooks": [0, 0], "code": [0, 0], "other": [0, 0]}
    comments = 0
    for root, dirs, files in os.walk(handout):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(root, name)
            text, _ = readable(path)
            if text is None:
                continue
            kind = "docs" if name.endswith(".md") else "notebooks" if name.endswith(".ipynb") \
                else "code" if name.endswith(CODE) or name == "CMakeLists.txt" else "other"
            lines = text.splitlines()
            counts[kind][0] += 1
            counts[kind][1] += len(lines)
            if kind == "code":
                comments += sum(1 for line in lines if re.search(r"(^|\s)(//|#)", line))
    d, n, c, o = (counts[k] for k in ("docs", "notebooks", "code", "other"))
    return (f"read {d[0] + n[0] + c[0] + o[0]} files: {d[1]} lines of docs in {d[0]} *.md, "
            f"{n[1]} lines of {n[0]} notebooks' cells, {c[1]} lines of code in {c[0]} files "
            f"({comments} of them with a comment), {o[1]} lines of {o[0]} other text files")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    handout = sys.argv[1]
    repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
    rows = table(repo)
    tasks = sys.argv[2:]
    if not tasks:
        with open(os.path.join(handout, "students/handout.txt"), encoding="utf-8") as f:
            tasks = f.read().split()
    leaks, looked = 0, 0
    for task in tasks:
        if task not in rows:
            sys.exit(f"handout_leaks: no task '{task}' in students/tasks.txt")
        exact, calls = answer_code(repo, rows[task])
        if not exact:
            print(f"LEAK {task}: found no statement of {rows[task][1]} to look for (the check sees nothing)")
            leaks += 1
        runs = answer_prose(repo, task)
        looked += len(exact) + len(calls)
        sentences = spelled(repo, calls)
        ideas = answer_ideas(repo, task)
        looked += len(ideas)
        for hit in scan(handout, task, exact, calls, sentences, runs, f"students/tasks/{task}.cpp",
                        ideas):
            print(f"LEAK {task}: {hit}")
            leaks += 1
    print(f"handout_leaks: {read_summary(handout)}")
    if leaks:
        print(f"handout_leaks: FAIL ({leaks} leaks in {handout})")
        sys.exit(1)
    print(f"handout_leaks: PASS ({len(tasks)} tasks, {looked} statements, calls and answer ideas "
          f"of ours and the marked passages looked for, none found)")


if __name__ == "__main__":
    main()
