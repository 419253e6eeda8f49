#!/usr/bin/env python3
"""A hostile probe of every command and script (ctest probe_hostile).

    tests/machinery/probe_hostile.py ROFORMER_BIN WORK_DIR      (run from the repository root)

The hand-written tables (cli_bad_inputs.sh, cli_scripts_hostile.sh, …) check the cases someone
thought of. This probe generates its cases from what the programs say about themselves, so an
option added tomorrow is probed tomorrow:

  * every subcommand's options, read from `roformer CMD --help` (CLI11 prints each option and
    the type of its value), each given hostile values for its type — empty, negative, NaN,
    infinite, overflowing, not a number; for paths: missing, a directory for a file, a file for
    a directory, a FIFO, a user's file where an output would go; for `--set`: unknown keys,
    empty and non-finite values — substituted one at a time into a command that works;
  * the read commands on a model whose weights hold a NaN;
  * every command that writes a directory (train, finetune, compare, import-hf, export-hf) as
    three writers of one --out at once, and stopped by SIGINT, SIGTERM, SIGHUP or SIGKILL at a
    random moment, then run again: one writer wins, every "wrote" names a file that is there,
    a signal leaves nothing (or a resumable run), the rerun finishes;
  * every reading command given every kind of directory it does not read (a run, a fine-tune,
    a comparison, an HF directory, an export, a damaged run, a stopped import, an empty or a
    user's folder);
  * every Python script in scripts/ and the shell scripts that take paths, with hostile paths.

A case passes when the program refuses it: a non-zero exit below 128 (no signal, no abort),
within its time limit, with a message on stderr, no Python traceback, no C++ `terminate`, no
sanitizer report. After every case the user's files (a folder of notes, pictures, tables and
foreign files whose formats look like ours) and the trained runs are compared byte for byte
with a snapshot, and the repository's `git status` must not change. The probe prints one line
per finding and, at the end, the counts; it passes only with zero findings.

Every hostile value must be refused: the probe keeps no list of exceptions.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys

BIN = os.path.realpath(sys.argv[1])
W = os.path.realpath(sys.argv[2])
REPO = os.getcwd()
PY = shutil.which("python3", path="/usr/bin") or sys.executable
LIMIT_S = 60  # a case that runs longer is a hang

findings = []
cases = 0


def finding(what):
    findings.append(what)
    print("FINDING:", what, flush=True)


def run(argv, cwd, timeout=LIMIT_S):
    try:
        p = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, "", ""


# ---------------------------------------------------------------------------------------------
# The sandbox: a working folder with configs/ and data/ (so a default output never lands in
# the repository), the user's files, and the trained runs the read commands use.
shutil.rmtree(W, ignore_errors=True)
CWD = os.path.join(W, "cwd")
USER = os.path.join(W, "user")
os.makedirs(CWD)
os.makedirs(USER)
for name in ("configs", "data", "scripts"):
    os.symlink(os.path.join(REPO, name), os.path.join(CWD, name))

with open(os.path.join(REPO, "data", "kjv.txt"), "rb") as f:
    corpus = f.read(200_000)
CORPUS = os.path.join(W, "corpus.txt")
open(CORPUS, "wb").write(corpus)

# The user's files: each looks like something a command writes (a format is not provenance).
user_files = {
    "notes.txt": b"my own notes\n",
    "weights.npy": b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
                   + b" " * 45 + b"\n" + b"\x00\x00\x80?",
    "graph.dot": b"digraph autograd {\n  my_node;\n}\n",
    "attention.csv": b"layer,head,query,key,weight\n0,0,0,0,1\n",
    "confusion.csv": b"true,predicted,count\nmine,mine,1\n",
    "page.json": b'{"tokens": ["mine"], "weights": []}\n',
    "curves.png": b"\x89PNG\r\n\x1a\nnot really a picture\n",
    "table.md": b"| my | table |\n|----|-------|\n",
    "summary.md": b"# my summary\n",
    "config.toml": b"[train]\nsteps = 1\n",
}
for name, data in user_files.items():
    open(os.path.join(USER, name), "wb").write(data)
USER_DIR = os.path.join(USER, "folder")  # a folder of the user's that is not a run
os.makedirs(USER_DIR)
open(os.path.join(USER_DIR, "notes.txt"), "wb").write(b"keep me\n")
FIFO = os.path.join(W, "fifo")
os.mkfifo(FIFO)
EMPTY_DIR = os.path.join(W, "empty_dir")
os.makedirs(EMPTY_DIR)
MISSING = os.path.join(W, "no_such_thing")
NOTES = os.path.join(USER, "notes.txt")

TINY = ["--config", "configs/tiny.toml", "--set", "train.eval_every=0", "--set", "data.val_windows=4",
        "--set", f"data.path={CORPUS}", "--set", "data.vocab_size=120", "--quiet"]


def setup(argv):
    rc, out, err = run([BIN] + argv, CWD, timeout=600)
    if rc != 0:
        print("FAIL: set-up:", " ".join(argv), "\n", out, err)
        sys.exit(1)


RUN = os.path.join(W, "run")
CLM = os.path.join(W, "clm")
FT = os.path.join(W, "ft")
CMP = os.path.join(W, "cmp")
setup(["train"] + TINY + ["--set", "train.steps=2", "--out", RUN])
setup(["train"] + TINY + ["--set", "train.steps=2", "--set", "train.objective=clm", "--out", CLM])
setup(["finetune", "--from", RUN, "--out", FT, "--task", "kjv-testament", "--quiet", "--set", "threads=1",
       "--set", "max_train_examples=200", "--set", "epochs=1"])
setup(["compare", "--config", "configs/compare_smoke.toml", "--seeds", "1", "--schemes", "none",
       "--set", "train.steps=2", "--set", "train.eval_every=0", "--no-plot", "--jobs", "1", "--out", CMP])

# HF: a transformers-made checkpoint (tests/reference/hf/) with a 60-line vocab.txt, for import-hf.
HF = os.path.join(W, "hf")
os.makedirs(HF)
for name in ("config.json", "model.safetensors"):
    shutil.copy(os.path.join(REPO, "tests", "reference", "hf", "hf_roformer_tiny", name), HF)
with open(os.path.join(HF, "vocab.txt"), "w") as f:
    f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] +
                      [f"w{i}" for i in range(5, 60)]) + "\n")

# NAN: the run with one weight set to NaN, its manifest updated so that only the NaN is wrong.
NAN = os.path.join(W, "nan")
shutil.copytree(RUN, NAN)
subprocess.run([PY, os.path.join(REPO, "tests", "machinery", "set_tensor.py"), NAN,
                "model.safetensors", "word_embeddings", "nan", "1"], check=True)


def snapshot():
    """Every byte of the user's files and the runs, and the repository's git status."""
    digest = {}
    for top in (USER, RUN, CLM, FT, NAN, CMP, HF):
        for root, dirs, files in os.walk(top):
            for name in files:
                path = os.path.join(root, name)
                if name == "lock":
                    continue  # a run's lock record is rewritten by every reader that locks
                try:
                    digest[path] = hashlib.sha256(open(path, "rb").read()).hexdigest()
                except OSError as e:
                    digest[path] = "unreadable: %s" % e
            for name in dirs:
                digest[os.path.join(root, name) + "/"] = "dir"
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                            capture_output=True).stdout
    digest["<git status>"] = hashlib.sha256(status).hexdigest()
    return digest


BEFORE = snapshot()
CRASH = re.compile(r"Traceback \(most recent|terminate called|Segmentation fault|AddressSanitizer|"
                   r"UndefinedBehaviorSanitizer|runtime error:|Assertion .* failed|core dumped|"
                   r"what\(\):|MPI_ERR")


def check(label, argv, cwd=CWD, must_refuse=True):
    """One case: run it, then judge the exit, the message and what it left behind."""
    global cases, BEFORE
    cases += 1
    rc, out, err = run(argv, cwd)
    if rc is None:
        finding(f"{label}: still running after {LIMIT_S} s (a hang)")
    elif rc < 0 or rc >= 128:
        finding(f"{label}: killed by a signal or crashed (exit {rc}): {err.strip()[-200:]}")
    elif CRASH.search(err) or CRASH.search(out):
        finding(f"{label}: a crash report instead of a message: {CRASH.search(err + out).group(0)}")
    elif must_refuse and rc == 0:
        finding(f"{label}: accepted (exit 0) — should be refused with a one-line reason")
    elif rc != 0 and not err.strip():
        finding(f"{label}: exit {rc} with nothing on stderr")
    after = snapshot()
    if after != BEFORE:
        changed = sorted(k for k in set(after) | set(BEFORE) if after.get(k) != BEFORE.get(k))
        finding(f"{label}: changed the user's files or the runs: {changed[:4]}")
        BEFORE = after  # report each change once


# ---------------------------------------------------------------------------------------------
# The commands: a base invocation that works, then every option replaced by hostile values.
counter = [0]


def fresh(kind):
    counter[0] += 1
    return os.path.join(W, "out", f"{kind}{counter[0]}")


os.makedirs(os.path.join(W, "out"))
BASES = {
    "train": lambda: ["train"] + TINY + ["--set", "train.steps=1", "--out", fresh("train")],
    "eval": lambda: ["eval", "--run", RUN, "--max-tokens", "512"],
    "fill-mask": lambda: ["fill-mask", "--run", RUN, "In the [MASK] God"],
    "generate": lambda: ["generate", "--run", CLM, "--max-new-tokens", "3", "In the"],
    "finetune": lambda: ["finetune", "--from", RUN, "--out", fresh("ft"), "--task", "kjv-testament",
                         "--quiet", "--set", "threads=1", "--set", "max_train_examples=60",
                         "--set", "epochs=1"],
    "classify": lambda: ["classify", "--run", FT, "And Jesus answered"],
    "attention": lambda: ["attention", "--run", RUN, "--out", fresh("att") + ".csv", "In the beginning"],
    "tokenize": lambda: ["tokenize", "--run", RUN, "In the beginning"],
    "compare": lambda: ["compare", "--config", "configs/compare_smoke.toml", "--seeds", "1",
                        "--schemes", "none", "--set", "train.steps=1", "--set", "train.eval_every=0",
                        "--no-plot", "--jobs", "1", "--out", fresh("cmp")],
    "extrapolate": lambda: ["extrapolate", "--runs", CMP, "--factors", "1", "--max-tokens", "256",
                            "--no-plot"],
    "rope-decay": lambda: ["rope-decay", "--max-distance", "8"],
    "rope-precision": lambda: ["rope-precision", "--max-position", "64",
                               "--out", fresh("prec") + ".csv"],
    "base-bound": lambda: ["base-bound", "--head-dim", "16", "--length", "32",
                           "--steps-per-decade", "50"],
    "frequencies": lambda: ["frequencies", "--run", RUN, "--batches", "1",
                            "--out", fresh("freq") + ".csv"],
    "import-hf": lambda: ["import-hf", HF, "--out", fresh("imp")],
    "export-hf": lambda: ["export-hf", RUN, "--out", fresh("exp")],
    "graph": lambda: ["graph", "--config", "configs/tiny.toml", "--out", fresh("graph") + ".dot"],
    "gradcheck": lambda: ["gradcheck", "--op", "rope"],
}

NUMBERS = ["", "-1", "nan", "inf", "-inf", "1e999", "abc", "99999999999999999999", "1.5.2"]
SET_VALUES = ["", "nokey", "train.nosuchkey=1", "train.lr=", "train.lr=nan", "train.lr=inf",
              "train.steps=-1", "train.steps=1e999", "=1", "train.lr=1 2"]
# What each path option reads or writes, by its name.
READ_DIRS = {"--run", "--from", "--runs"}
READ_FILES = {"--config", "--tokenizer", "--plot-script"}
WRITE_PATHS = {"--out", "--confusion", "--csv"}


def options_of(cmd):
    rc, out, err = run([BIN, cmd, "--help"], CWD)
    found = []
    for line in out.splitlines():
        m = re.match(r"^\s{2}(--[a-z][a-z0-9-]*)(?:,\S+)?(?:\s+(\S+))?", line)
        if not m or m.group(1) == "--help":
            continue
        kind = m.group(2) or ""
        if not re.match(r"(TEXT|INT|UINT|FLOAT|COUNT)", kind):
            kind = ""  # a flag
        found.append((m.group(1), kind))
    return found


def replace_option(argv, option, value):
    """argv with `option`'s value replaced by `value` (or the option added)."""
    out = list(argv)
    if option in out:
        i = out.index(option)
        if option == "--set":  # keep the base's --set pairs, add the hostile one
            return out + [option, value]
        out[i + 1] = value
        return out
    return out + [option, value]


def hostile_values(cmd, option, kind):
    if option == "--set":
        return SET_VALUES
    if option in READ_DIRS:
        return ["", MISSING, NOTES, FIFO, EMPTY_DIR, USER_DIR]
    if option in READ_FILES:
        return ["", MISSING, USER_DIR, FIFO, "/dev/zero"]
    if option in WRITE_PATHS:
        if cmd in ("train", "finetune", "compare"):
            return ["", USER_DIR, NOTES, RUN if cmd != "train" else FT]
        suffix = {"attention": ["weights.npy", "attention.csv", "page.json"], "graph": ["graph.dot"],
                  "classify": ["confusion.csv"]}.get(cmd, ["notes.txt"])
        return ["", USER_DIR] + [os.path.join(USER, s) for s in suffix]
    if kind.startswith("FLOAT"):  # 1e20 is a finite float: a number, if an odd one
        return [v for v in NUMBERS if v != "99999999999999999999"]
    if kind.startswith(("INT", "UINT")) or "COUNT" in kind:
        return NUMBERS
    if kind.startswith("TEXT"):
        return ["", "nosuchvalue", "\xff"]
    return []


base_ok = {}
for cmd, base in BASES.items():
    rc, out, err = run([BIN] + base(), CWD)
    base_ok[cmd] = rc == 0
    if rc != 0:
        finding(f"{cmd}: the probe's base command fails (exit {rc}): {err.strip()[-200:]}")
BEFORE = snapshot()

for cmd, base in BASES.items():
    if not base_ok[cmd]:
        continue
    for option, kind in options_of(cmd):
        for value in hostile_values(cmd, option, kind):
            argv = replace_option(base(), option, value)
            if option == "--plot-script" and "--no-plot" in argv:
                check(f"{cmd} {option} {value!r} --no-plot", [BIN] + argv)  # an ignored option
                argv.remove("--no-plot")
            check(f"{cmd} {option} {value!r}", [BIN] + argv)

# The positional texts: empty, not UTF-8, longer than any limit.
LONG = "word " * 10_000
for cmd, text_values in {
    "fill-mask": ["", "\udcff [MASK]", LONG + "[MASK]", "no mask here"],
    "generate": ["", LONG],
    "classify": ["", LONG],
    "attention": ["", LONG],
    "tokenize": ["", LONG],
}.items():
    for value in text_values:
        argv = BASES[cmd]()
        argv[-1] = value
        argv = [a.encode("utf-8", "surrogateescape") if isinstance(a, str) else a for a in argv]
        check(f"{cmd} text {value[:20]!r}", [BIN.encode()] + argv)

# The positional directories of import-hf and export-hf: missing, a file, a FIFO, empty, "".
for cmd, at in (("import-hf", 1), ("export-hf", 1)):
    for value in ["", MISSING, NOTES, FIFO, EMPTY_DIR, USER_DIR]:
        argv = BASES[cmd]()
        argv[at] = value
        check(f"{cmd} directory {value!r}", [BIN] + argv)

# The read commands on a model whose weights hold a NaN.
for argv in (["eval", "--run", NAN, "--max-tokens", "256"], ["fill-mask", "--run", NAN, "In the [MASK]"],
             ["attention", "--run", NAN, "In the beginning"], ["tokenize", "--run", NAN, "x"],
             ["export-hf", NAN, "--out", fresh("expnan")],
             ["finetune", "--from", NAN, "--out", fresh("ftnan"), "--quiet", "--set", "epochs=1",
              "--set", "max_train_examples=60"]):
    must_refuse = argv[0] != "tokenize"  # tokenize never reads the weights
    check(f"NaN model: {argv[0]}", [BIN] + argv, must_refuse=must_refuse)

# ---------------------------------------------------------------------------------------------
# Every command that writes a directory, as transactions (docs/training.md, "What every command
# guarantees"): N writers of one --out at once, signals at random moments and the rerun.
import random
import signal
import time

WRITERS = ("train", "finetune", "compare", "import-hf", "export-hf")
rng = random.Random(47)


def out_of(argv):
    return argv[argv.index("--out") + 1]


def leftovers():
    """Staging directories and temporaries a writer left in the probe's output folder."""
    found = []
    for root, dirs, files in os.walk(os.path.join(W, "out")):
        found += [os.path.join(root, n) for n in dirs + files if ".partial-" in n or ".tmp-" in n]
    return found


def judge_finished(label, argv, out):
    """An exit 0: every file its "wrote" line names is there."""
    for line in out.splitlines():
        if line.startswith("wrote ") and ":" in line:
            for name in line.split(":", 1)[1].split():
                if not os.path.isfile(os.path.join(out_of(argv), name)):
                    finding(f"{label}: said it wrote {name}, which is missing")


for cmd in WRITERS:
    for trial in range(2):
        global_argv = BASES[cmd]()
        label = f"{cmd}: 3 writers of one --out (trial {trial + 1})"
        cases += 1
        procs = [subprocess.Popen([BIN] + global_argv, cwd=CWD, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
        results = [(p.wait(timeout=600), p.stdout.read().decode(), p.stderr.read().decode())
                   for p in procs]
        won = [r for r in results if r[0] == 0]
        if len(won) != 1:
            finding(f"{label}: {len(won)} of 3 exited 0")
        for rc, out, err in results:
            if rc == 0:
                judge_finished(label, global_argv, out)
            elif rc < 0 or rc >= 128 or not err.strip() or CRASH.search(err):
                finding(f"{label}: a loser ended with exit {rc}: {err.strip()[-200:]}")
        if leftovers():
            finding(f"{label}: left {leftovers()[:3]}")

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)
for cmd in WRITERS:
    for sig in SIGNALS:
        argv = BASES[cmd]()
        label = f"{cmd}: {signal.Signals(sig).name}"
        cases += 1
        p = subprocess.Popen([BIN] + argv, cwd=CWD, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        delay = rng.uniform(0.0, 2.0)
        time.sleep(delay)
        p.send_signal(sig)
        rc = p.wait(timeout=600)
        err = p.stderr.read().decode()
        label += f" at {delay:.2f} s"
        if rc not in (0, 128 + sig, -sig):
            finding(f"{label}: exit {rc}: {err.strip()[-200:]}")
        if CRASH.search(err):
            finding(f"{label}: a crash report: {CRASH.search(err).group(0)}")
        one_shot = cmd in ("import-hf", "export-hf")
        if rc != 0 and sig != signal.SIGKILL and one_shot:
            if os.path.exists(out_of(argv)) or leftovers():
                finding(f"{label}: left {out_of(argv)} or {leftovers()[:3]}")
        # The rerun: the same command finishes it — or, for a resumable run, says --resume,
        # which then finishes it.
        rc2, out2, err2 = run([BIN] + argv, CWD, timeout=600)
        # compare's rerun of a finished comparison is its documented "continue": it trains
        # nothing and reports the same runs; every other writer refuses a finished --out.
        if rc == 0 and rc2 == 0 and cmd != "compare":
            finding(f"{label}: a second writer of a finished --out exited 0")
        if rc != 0 and rc2 != 0:
            if "--resume" in err2 and not one_shot:
                rc2, out2, err2 = run([BIN] + argv + ["--resume"], CWD, timeout=600)
            if rc2 != 0:
                finding(f"{label}: the rerun fails (exit {rc2}): {err2.strip()[-200:]}")
        if rc != 0 and rc2 == 0:
            judge_finished(label + ", rerun", argv, out2)
        if leftovers():
            finding(f"{label}: the rerun left {leftovers()[:3]}")

# Every reading command given every other kind of directory: refused with one line.
EXPORT = fresh("kind_export")
setup(["export-hf", RUN, "--out", EXPORT])
DAMAGED = fresh("kind_damaged")
shutil.copytree(RUN, DAMAGED)
os.remove(os.path.join(DAMAGED, "config.toml"))
PARTIAL = fresh("kind_partial")
os.makedirs(os.path.join(os.path.dirname(PARTIAL),
                         "." + os.path.basename(PARTIAL) + ".partial-import-hf-999999"))
KINDS = {"a training run": RUN, "a fine-tune": FT, "a comparison": CMP, "an HF directory": HF,
         "an export": EXPORT, "a damaged run": DAMAGED, "a stopped import": PARTIAL,
         "an empty directory": EMPTY_DIR, "a user's folder": USER_DIR}
READERS = {  # the command, where the directory goes, the kinds it reads
    "eval": (["eval", "--run", None, "--max-tokens", "256"], {"a training run"}),
    "fill-mask": (["fill-mask", "--run", None, "In the [MASK]"], {"a training run"}),
    "generate": (["generate", "--run", None, "--max-new-tokens", "2", "In"], set()),
    "attention": (["attention", "--run", None, "In the beginning"], {"a training run"}),
    "frequencies": (["frequencies", "--run", None, "--batches", "1"], {"a training run"}),
    "tokenize": (["tokenize", "--run", None, "x"], {"a training run", "a fine-tune"}),
    "classify": (["classify", "--run", None, "And Jesus answered"], {"a fine-tune"}),
    "finetune --from": (["finetune", "--from", None, "--out", None, "--task", "kjv-testament",
                         "--quiet", "--set", "epochs=1", "--set", "max_train_examples=60"],
                        {"a training run"}),
    "export-hf": (["export-hf", None, "--out", None], {"a training run"}),
    "import-hf": (["import-hf", None, "--out", None], {"an HF directory", "an export"}),
    "extrapolate": (["extrapolate", "--runs", None, "--factors", "1", "--max-tokens", "256",
                     "--no-plot"], {"a comparison"}),
}
for name, (template, reads) in READERS.items():
    for kind, path in KINDS.items():
        if kind in reads:
            continue
        argv = list(template)
        argv[argv.index(None)] = path
        if None in argv:
            argv[argv.index(None)] = fresh("never")
        check(f"{name} given {kind}", [BIN] + argv)

# ---------------------------------------------------------------------------------------------
# The scripts: every Python script in scripts/ (but the shared module) and the shell scripts
# that take paths, with hostile paths in each position.
PATHS = ["", MISSING, NOTES, USER_DIR, FIFO, EMPTY_DIR]
scripts = sorted(f for f in os.listdir(os.path.join(REPO, "scripts"))
                 if f.endswith(".py") and f != "script_outputs.py")
for script in scripts:
    path = os.path.join(REPO, "scripts", script)
    for p in PATHS:
        check(f"{script} {p!r}", [PY, path, p])
    if script in ("plot_curves.py",):
        for out in ("curves.png", "notes.txt", "table.md"):
            check(f"{script} {CMP} all {out}", [PY, path, CMP, "all", os.path.join(USER, out)])
    if script == "plot_confusion.py":
        check(f"{script} a user's picture", [PY, path, os.path.join(USER, "confusion.csv"),
                                              os.path.join(USER, "curves.png")])
    if script == "finetune_table.py":
        check(f"{script} a user's table", [PY, path, USER])
    if script == "plot_run.py":
        check(f"{script} --out a user's picture", [PY, path, RUN, "--out", os.path.join(USER, "curves.png")])
        check(f"{script} NaN run", [PY, path, NAN, "--out", fresh("plot") + ".png"], must_refuse=False)
    if script == "plot_rope.py":
        check(f"{script} --run a user's folder", [PY, path, "--run", USER_DIR])
# bitcheck.sh deletes OUT: a folder of the user's, the repository, a file.
for out in (USER_DIR, USER, REPO, NOTES, ""):
    check(f"bitcheck.sh OUT={out!r}", ["bash", os.path.join(REPO, "scripts", "bitcheck.sh"),
                                       BIN, BIN, out])

print(f"probe: {cases} cases, {len(findings)} findings")
print("PASS" if not findings else "FAIL")
sys.exit(0 if not findings else 1)
