"""The one rule for every file the Python scripts in scripts/ write: what they may replace, and
how they write it. Pictures: plot_rope.py, plot_run.py, plot_curves.py, plot_confusion.py; text:
finetune_table.py's table.md and finetune_results.csv, class_table.py's class.csv and
class.html. The C++ commands' rule is src/io/output_file.hpp; docs/training.md, "What every
script guarantees", states both for users.

Provenance, not format: an existing file is the script's own only when it carries a mark the
script controls, never because it merely looks like the kind of file the script writes.
  picture  a PNG whose `Software` text chunk is exactly the script's OWNER string (read chunk by
           chunk, so the string quoted somewhere else in a file does not count)
  text     a sidecar NAME.written-by beside it: one line naming OWNER and the SHA-256 of the
           bytes the script wrote; the file stays ours only while its bytes still hash to that
Anything else at the output path (a user's file, another script's, a link, a folder, a FIFO)
is refused with one line, and so is an output folder that does not exist. `--force`, where a
script takes it, replaces the script's own file after the user changed it (a text file whose
hash no longer matches; plot_run.py's redraw of its own picture); it never replaces a file
without the script's mark: move that away.
Every write is atomic: the bytes go to NAME.tmp-PID in the same folder, are flushed, and the
temporary is renamed over NAME, so an interrupted script leaves the old file or the new one.
The inputs' side of the same promise: read_csv and number turn a missing file, a blank line, a
short row or an empty, non-numeric or non-finite cell, or an integer larger than any count the
commands write, into one line naming file, line and column.
"""
import csv
import hashlib
import math
import os
import re
import struct
import sys


class Refusal(Exception):
    """One actionable line for the user; the script prints it and exits with code 2."""


# ---- shared checks ------------------------------------------------------------------------------
def check_folder(path, what="output"):
    """Refuses an empty PATH, or one whose folder does not exist (nothing written yet)."""
    if not path:
        raise Refusal(f"the {what} path is empty; name a file")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise Refusal(f"the folder {folder} for {path} does not exist; create it (mkdir -p "
                      f"{folder}) or pick another {what} path")


def check_regular(path):
    """Refuses a link, a folder, a FIFO or a device at PATH (a missing PATH is fine)."""
    if os.path.islink(path):
        raise Refusal(f"{path} is a symbolic link; the scripts never write through one: "
                      "remove the link or pick another output path")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise Refusal(f"{path} exists and is not a regular file (a folder?); pick another "
                      "output path")


def atomic_write(path, data):
    """DATA (bytes) to PATH through PATH.tmp-PID in the same folder, flushed, then renamed."""
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temporary, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except OSError as e:
        raise Refusal(f"cannot write {path} ({e.strerror}); free space or pick another "
                      "output path") from None
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


# ---- pictures: the PNG Software chunk ---------------------------------------------------------------
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_software(path):
    """The value of PATH's `Software` tEXt chunk, or None (not a PNG, or no such chunk)."""
    with open(path, "rb") as f:
        if f.read(8) != PNG_SIGNATURE:
            return None
        while True:
            head = f.read(8)  # chunk: length (4 bytes, big-endian), type (4), data, CRC (4)
            if len(head) < 8:
                return None
            length, kind = struct.unpack(">I4s", head)
            if kind == b"IEND":
                return None
            if kind != b"tEXt":
                f.seek(length + 4, os.SEEK_CUR)
                continue
            key, _, value = f.read(length).partition(b"\0")
            if key == b"Software":
                return value.decode("latin-1")
            f.seek(4, os.SEEK_CUR)


def drawn_by(path, software):
    """True when PATH is a regular file, a PNG whose Software chunk is SOFTWARE."""
    if not os.path.isfile(path) or os.path.islink(path):
        return False
    try:
        return png_software(path) == software
    except OSError:
        return False


def check_replaceable(path, software, script, force=None):
    """Refuses to draw over PATH unless it is new or SCRIPT's own picture (force=False: the
    script asks for --force before it redraws even its own)."""
    check_folder(path)
    check_regular(path)
    if not os.path.lexists(path):
        return
    if force is False and drawn_by(path, software):
        raise Refusal(f"{path} exists; pass --force to redraw it, or pick another --out")
    if not drawn_by(path, software):
        raise Refusal(f"{path} exists and was not drawn by {script}; "
                      + ("--force replaces only this script's own pictures: " if force else "")
                      + "move it away or pick another --out")


def save(fig, path, plt, software, dpi=100):
    """Writes FIG to PATH through a temporary file in the same folder, then closes it."""
    temporary = f"{path}.tmp-{os.getpid()}.png"
    try:
        fig.savefig(temporary, dpi=dpi, metadata={"Software": software})
        os.replace(temporary, path)
    except OSError as e:
        raise Refusal(f"cannot write {path} ({e.strerror}); free space or pick another "
                      "output path") from None
    finally:
        plt.close(fig)
        if os.path.exists(temporary):
            os.remove(temporary)


# ---- text: the NAME.written-by sidecar -----------------------------------------------------------
MARK = re.compile(r"^(roformer-cpp \S+) wrote .+; sha256 ([0-9a-f]{64})$")


def sidecar(path):
    return f"{path}.written-by"


def read_mark(path):
    """(owner, sha256) from PATH's sidecar; None when there is none; Refusal when the name is
    taken by something that is not a sidecar (a user's file is never overwritten)."""
    mark = sidecar(path)
    if not os.path.lexists(mark):
        return None
    check_regular(mark)
    with open(mark, "rb") as f:
        found = MARK.match(f.read(4096).decode("utf-8", "replace").strip())
    if not found:
        raise Refusal(f"{mark} exists and is not a .written-by mark; move it away")
    return found.group(1), found.group(2)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_text_replaceable(path, owner, force=False):
    """Refuses to write PATH unless it is new, or OWNER wrote it (its sidecar says so) and it
    has not changed since — or it changed and the user passed --force (force=True)."""
    check_folder(path)
    check_regular(path)
    mark = read_mark(path)
    if not os.path.lexists(path):
        return
    script = owner.split()[-1]
    if mark is None or mark[0] != owner:
        raise Refusal(f"{path} exists and was not written by {script} (no {sidecar(path)} "
                      "naming it); --force never replaces such a file: move it away or pick "
                      "another output folder")
    if mark[1] != sha256(path) and not force:
        raise Refusal(f"{path} was changed after {script} wrote it; pass --force to replace "
                      "it with a new one, or move it away")


def write_bytes(path, data, owner):
    """DATA to PATH (atomic), then its sidecar naming OWNER and the bytes' SHA-256 (the one
    place the mark is written). Call check_text_replaceable first (for every output, before
    writing any)."""
    atomic_write(path, data)
    line = f"{owner} wrote {os.path.basename(path)}; sha256 {hashlib.sha256(data).hexdigest()}\n"
    atomic_write(sidecar(path), line.encode("utf-8"))


def write_text(path, text, owner):
    """TEXT to PATH as UTF-8, with its sidecar (write_bytes)."""
    write_bytes(path, text.encode("utf-8"), owner)


# ---- reading a run's CSV: a bad cell is one line naming it ----------------------------------------
def read_csv(path, columns, fix):
    """[(line number, {column: text})] of the CSV at PATH, which must have COLUMNS. A missing
    file, a folder, a blank line or a short row is a Refusal naming it; FIX says what to do."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise Refusal(f"cannot read {path} ({reason}); {fix}") from None
    if not rows or not rows[0]:
        raise Refusal(f"{path} is empty or starts with a blank line; {fix}")
    header = rows[0]
    missing = [c for c in columns if c not in header]
    if missing:
        raise Refusal(f"{path} lacks the column(s) {', '.join(missing)}; {fix}")
    table = []
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            raise Refusal(f"{path}:{line} is a blank line; {fix}")
        if len(row) != len(header):
            raise Refusal(f"{path}:{line} has {len(row)} cells, not {len(header)}; {fix}")
        table.append((line, dict(zip(header, row))))
    return table


# The largest integer a roformer command writes (a size_t count, step or position). A larger
# one is no count of ours, and past about 1e308 it is not even a float: numpy and matplotlib
# would stop with an OverflowError traceback when they draw it.
LARGEST_INTEGER = 2**64 - 1


def shown(text, limit=40):
    """TEXT for a one-line message: a cell of thousands of digits shows its start and length."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def number(path, line, row, column, kind=float, empty=False):
    """ROW[COLUMN] as a finite KIND (float or int); an empty cell is None when EMPTY allows it."""
    text = row[column].strip()
    if not text:
        if empty:
            return None
        raise Refusal(f"{path}:{line}: the {column} cell is empty; the file is damaged or "
                      "unfinished: rerun the command that wrote it")
    try:
        value = kind(text)
    except ValueError:  # also an integer of more digits than Python converts (4300)
        raise Refusal(f"{path}:{line}: the {column} cell '{shown(text)}' is not "
                      + ("an integer" if kind is int else "a number")
                      + "; the file is damaged: rerun the command that wrote it") from None
    if kind is float and not math.isfinite(value):
        raise Refusal(f"{path}:{line}: the {column} cell is {shown(text)}, not a finite number (a "
                      "run that diverged?); leave that run out or train it again")
    if kind is int and abs(value) > LARGEST_INTEGER:
        raise Refusal(f"{path}:{line}: the {column} cell {shown(text)} is larger than any count "
                      f"roformer writes (at most 2^64 - 1); the file is damaged: rerun the "
                      "command that wrote it")
    return value


# Debian's python, which scripts/setup.sh --all gives python3-numpy and python3-matplotlib; a
# script started by another python that lacks them runs itself again with this one, once (the
# variable below marks the second start, so a python that lacks them too cannot loop).
DEBIAN_PYTHON = "/usr/bin/python3"
RERUN_MARK = "ROFORMER_SCRIPT_RERUN"


def plotting(script, numpy=False):
    """(numpy or None, matplotlib, matplotlib.pyplot) with the Agg backend. When this python lacks
    them and Debian's has them, the script is started again with Debian's (same arguments, one
    line on stderr saying so); otherwise None after one line on stderr saying how to run it (the
    scripts then exit 3)."""
    try:
        np = __import__("numpy") if numpy else None
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        need = "numpy or matplotlib" if numpy else "matplotlib"
        modules = "numpy, matplotlib" if numpy else "matplotlib"
        if os.environ.get(RERUN_MARK) is None and _has_modules(DEBIAN_PYTHON, modules):
            print(f"{script}: this python ({sys.executable}) lacks {need}; running the script "
                  f"again with {DEBIAN_PYTHON}", file=sys.stderr)
            sys.stderr.flush()
            os.environ[RERUN_MARK] = sys.executable
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, sys.argv[0], *sys.argv[1:]])
        print(f"{script}: this python ({sys.executable}) lacks {need} ({e}), and "
              f"{DEBIAN_PYTHON} cannot stand in; install python3-numpy python3-matplotlib "
              f"(scripts/setup.sh --all does), then run {DEBIAN_PYTHON} {sys.argv[0]}",
              file=sys.stderr)
        return None
    return np, matplotlib, plt


def _has_modules(python, modules):
    """Whether PYTHON (another interpreter, started fresh) imports MODULES."""
    if not os.access(python, os.X_OK):
        return False
    import subprocess
    try:
        return subprocess.run([python, "-c", f"import {modules}"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def csv_plot_args(argv, description, command, example, missing="matplotlib"):
    """The arguments of a script that draws one CSV of `roformer COMMAND --out FILE.csv`:
    the CSV and --out (default: the CSV's name with .png; a .png either way)."""
    import argparse
    p = argparse.ArgumentParser(
        description=description,
        epilog=f"Exit codes: 0 written, 2 bad arguments or a damaged CSV, 3 {missing} "
               f"missing. Example: {example}")
    p.add_argument("csv", help=f"the CSV `roformer {command} --out` wrote")
    p.add_argument("--out", help="the picture (default: the CSV's name with .png)")
    args = p.parse_args(argv)
    if not args.csv:
        p.error(f"the CSV is an empty name; give the file `roformer {command} --out` wrote")
    if not args.out:
        args.out = os.path.splitext(args.csv)[0] + ".png"
    if not args.out.endswith(".png"):
        p.error(f"--out {args.out}: name a .png file")
    return args
