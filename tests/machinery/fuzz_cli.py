#!/usr/bin/env python3
"""A command-line fuzzer for `roformer` (ctest fuzz_cli), beside the hostile probe.

    tests/machinery/fuzz_cli.py --binary BIN [--work DIR] [--seeds 1,2,3,commit] [--cases N]
    tests/machinery/fuzz_cli.py --binary BIN --seed S --case K       (rerun one case)

The probe (probe_hostile.py) changes one option of a working command at a time and checks
that each hostile value is refused. This fuzzer draws whole command lines at random: a
subcommand, several of its options and `--set` keys, each value biased toward the edges (0, 1,
2, 3, 8, -1, 2⁶⁴, 1e-300, 1e400, nan, "", 240-character names, directories, symlinks, missing
paths), and checks invariants after every case instead of an expected answer. Nothing about the
command line is written here: the subcommands and their options (type, default, choices) are
read from `roformer --help` and `roformer CMD --help`; the config keys and their types from the
`config.toml` and `finetune.toml` a tiny run writes (every key, resolved); the words an enum key
takes from the binary's own refusal of a wrong word. An option added tomorrow is fuzzed tomorrow.

Invariants, after every case:
  exit       the exit status is 0, 2, or 128+n for a signal the fuzzer sent; never an abort
             (134), a kill (137), a segfault (139), 1, or a hang: a case still running after
             --timeout seconds gets SIGTERM and must end within 10 s;
  message    an exit 2 says one "error: …" line on stderr; no traceback, no what(), no
             "terminate called";
  finite     an exit 0 prints no nan/inf on stdout and writes none into a CSV, JSON or MD file;
  wrote      every file a "wrote X" line names exists, with its .written-by mark whose sha256
             is the file's (src/io/output_file.hpp);
  litter     a failure leaves nothing new in the case's directory (no .tmp-*, .partial-*, half
             directory; a stopped run that holds a checkpoint is a run, not litter), and no case
             changes the session's runs or the user's files;
  writers    a few cases run 2–3 writers of one output file at once: afterwards the file's mark
             matches its bytes, and every writer that said "wrote" finds its own bytes there
             (two writers with different bytes cannot both succeed).

  set-ups    about three cases in ten get a hostile set-up (KINDS: links, hard and symbolic,
             to the output and to its NAME.lock; a run copied with `cp -al`; a run missing a
             record file; an output a few characters short of PATH_MAX; a tight `ulimit -v`),
             judged by the invariants above, and besides: the files made for the user keep
             every byte (a run missing a record file: when the command fails), and nothing is
             written past PATH_MAX or where a walk of the case's directory cannot read it.

The seed `commit` is one taken from the checkout's HEAD (a fixed one outside git), printed on
the first line with the command that reruns it: ctest runs it beside its fixed seeds, so each
commit tries cases no earlier run has tried.

Each case is drawn from random.Random("SEED:K") alone, so `--seed S --case K` repeats exactly
case K of seed S (after the session's tiny runs are made again). Every violation is one line
with that rerun command and the command line itself; the last line is
"fuzz_cli: N cases, K invariants checked, V violations" and the exit status is 1 when V > 0.
"""
import argparse
import hashlib
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SELF = os.path.relpath(os.path.abspath(__file__), REPO)

# ---------------------------------------------------------------------------------------------
# Values, biased toward the edges.
INTS = ["0", "1", "2", "3", "8", "-1", "4", "5", "12", "16", "64", "4294967296",
        "18446744073709551616", "9223372036854775807", "1000000000", "", "1e3", "abc"]
SMALL = ["1", "2", "3", "4", "5", "8", "12", "0", "16"]  # lengths, positions, sizes
FLOATS = ["0", "-1", "1e-300", "nan", "1e400", "5e-324", "1", "1e300", "2", "3", "8", "0.5",
          "1e-100", "inf", "-inf", "", "1e9", "-0"]
BOOLS = ["true", "false", "1", "0", "", "yes"]
TEXTS = ["In the beginning God created the [MASK]", "[MASK]", "And [MASK] [MASK] [MASK] said",
         "a", "x" * 300, "the " * 3000, "In", "Jesus wept [MASK] and", "\u00e9\u00e8 \u4e2d [MASK]"]
# The hostile set-ups a case may get (docs/testing.md lists them); KIND_SHARE of the cases get
# one. Each is judged by the invariants of every case, and the files it made for the user keep
# every byte (a record-deleted run: every byte, when the command fails).
KINDS = ["lock-hardlink", "lock-symlink", "out-hardlink", "out-symlink", "run-cp-al",
         "record-deleted", "deep-out", "ulimit-v"]
KIND_SHARE = 0.3
PATH_MAX = os.pathconf("/", "PC_PATH_MAX")
# `ulimit -v` of a ulimit-v case: the least under which the binary loads (measured), plus one
# of these: the first few MiB are where a library's threads fail to start at load time.
ULIMIT_STEPS_KB = [0, 1024, 4096, 8192, 16384, 32768, 65536, 150000, 300000, 700000]
OVERLAP_S = 0.5  # writers that ran side by side this long overlapped for sure
LONG_NAME = "n" * 236  # with a 4-character suffix: 240 characters, at NAME_MAX's edge
CRASH = re.compile(r"Traceback \(most recent|terminate called|Segmentation fault|AddressSanitizer|"
                   r"runtime error:|Assertion .* failed|core dumped|what\(\):|MPI_ERR")
NONFINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf(?:inity)?)(?![\w.])", re.IGNORECASE)
NONFINITE_CELL = re.compile(r"^\s*[-+]?(?:nan|inf(?:inity)?)\s*$", re.IGNORECASE)


def pick(rng, pool, edge=0.8):
    """Mostly the first few values (the edges), sometimes any."""
    return rng.choice(pool[:8] if rng.random() < edge else pool)


# ---------------------------------------------------------------------------------------------
# What the binary says about itself.
def run_quiet(argv, cwd, timeout=60, env=None):
    p = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def parse_help(text):
    """CLI11's help: [(name, type, default, required, repeatable, description, positional)]."""
    entries, positional = [], False
    for line in text.splitlines():
        if line.startswith("Positionals:"):
            positional = True
        elif line.startswith("Options:") or line.startswith("Subcommands:"):
            positional = False
        m = re.match(r"^  (\S+)(?: (.*?))?(?:\s{2,}(.*))?$", line)
        if m and not line.startswith("   "):
            name, spec, desc = m.group(1), (m.group(2) or "").strip(), m.group(3) or ""
            if name.endswith("--help"):
                continue
            kind = spec.split(":")[0].split(" ")[0] if not spec.startswith(":") else ""
            default = re.search(r"=(\S+)", spec)
            entries.append({"name": name, "type": kind, "default": default and default.group(1),
                            "required": "REQUIRED" in spec, "many": "..." in spec,
                            "desc": desc, "positional": positional})
        elif line.startswith("      ") and entries:
            entries[-1]["desc"] += " " + line.strip()
    return entries


def choices_of(desc):
    """Words a description lists as choices: 'rope | gelu | …' or 'a, b, c' or 'a,b,c'."""
    words = []
    for m in re.finditer(r"[a-z0-9_-]+(?:\s*[|,]\s*[a-z0-9_-]+){1,}", desc):
        words += [w.strip() for w in re.split(r"[|,]", m.group(0)) if w.strip()]
    return words


def classify(opt):
    """What kind of value an option takes, from its name, type and description."""
    name, desc, kind = opt["name"].lstrip("-"), opt["desc"], opt["type"]
    if not kind:
        return "flag"
    if name == "set":
        return "set"
    if kind in ("INT", "UINT"):
        return "small" if re.search(r"seq|len|position|dim|head|layer|top", name) else "int"
    if kind == "FLOAT":
        return "float"
    if opt["positional"]:
        return "read-dir" if name in ("run", "dir") else "text"
    if name in ("run", "from", "runs"):
        return "read-dir"
    if re.search(r"\bwrite\b|\bWrite\b|to create|directory to write|Comparison directory", desc):
        return "write-dir" if re.search(r"directory", desc) else "write-file"
    if re.search(r"file|File|FILE|Path to|\.json|TOML", desc):
        return "read-file"
    return "choice"


class Binary:
    def __init__(self, path, cwd):
        self.path = path
        rc, out, _ = run_quiet([path, "--help"], cwd)
        section = out.split("Subcommands:", 1)[-1]
        self.commands = re.findall(r"^  (\S+)\s{2,}", section, re.MULTILINE)
        if not self.commands:
            sys.exit(f"fuzz_cli: {path} --help lists no subcommands")
        self.options = {}
        for cmd in self.commands:
            rc, out, _ = run_quiet([path, cmd, "--help"], cwd)
            opts = parse_help(out)
            for o in opts:
                o["kind"] = classify(o)
                o["choices"] = choices_of(o["desc"])
                suffixes = re.findall(r"FILE(\.[a-z]+)", o["desc"]) or \
                    [s for w, s in (("CSV", ".csv"), ("DOT", ".dot")) if w in o["desc"]]
                o["suffixes"] = suffixes or [".csv"]
            self.options[cmd] = opts


def config_keys(run_dir, name):
    """{key: default as TOML text} from a run's resolved config file."""
    keys, table = {}, None
    for line in open(os.path.join(run_dir, name), encoding="utf-8"):
        line = line.strip()
        if line.startswith("["):
            table = line.strip("[]")
        elif "=" in line and not line.startswith("#"):
            k, v = (s.strip() for s in line.split("=", 1))
            keys[k if table == "finetune" and name == "finetune.toml" else f"{table}.{k}"] = v
    return keys


def enum_words(binary, cwd, key):
    """The words a string key takes, from the binary's refusal of a wrong one ('' if free)."""
    rc, out, err = run_quiet([binary, "graph", "--set", f"{key}=zz_not_a_word"], cwd)
    m = re.search(r"must be one of (.*?), got", err)
    return [w.strip() for w in m.group(1).replace(" or ", ", ").split(",")] if m else []


# ---------------------------------------------------------------------------------------------
# The session: a sandbox, tiny runs made once, the case directories.
class Session:
    def __init__(self, args):
        self.bin = os.path.realpath(args.binary)
        self.w = os.path.realpath(args.work)
        self.timeout = args.timeout
        self.mem_kb = args.mem_mb * 1024
        self.env = dict(os.environ)
        # Emptied first — so only a directory this fuzzer made (its stamp inside) or an empty one.
        stamp = os.path.join(self.w, ".fuzz_cli")
        if os.path.isdir(self.w) and os.listdir(self.w) and not os.path.exists(stamp):
            sys.stderr.write(f"error: --work {self.w} holds files this fuzzer did not make; "
                             "give a new or empty directory\n")
            sys.exit(2)
        shutil.rmtree(self.w, ignore_errors=True)
        os.makedirs(self.w)
        open(stamp, "w").close()
        self.fix = os.path.join(self.w, "fixtures")
        os.makedirs(self.fix)
        self.cwd0 = self.new_cwd(os.path.join(self.w, "setup"))
        self.b = Binary(self.bin, self.cwd0)
        self.commands = [c for c in self.b.commands if not args.commands or
                         c in args.commands.split(",")]
        with open(os.path.join(REPO, "data", "kjv.txt"), "rb") as f:
            corpus = f.read(200_000)
        self.corpus = os.path.join(self.fix, "corpus.txt")
        open(self.corpus, "wb").write(corpus)
        f = self.fix
        # Four threads, more than a CI machine has cores: a run carries its thread count to
        # every reader, and the products' split over threads (a block per thread, some blocks
        # empty when the rows are few) is a path the many-core machines users train on take.
        self.tiny = ["--config", "configs/tiny.toml", "--set", "train.eval_every=0", "--set",
                     "data.val_windows=4", "--set", f"data.path={self.corpus}", "--set",
                     "data.vocab_size=120", "--set", "train.steps=2", "--set", "train.threads=4",
                     "--quiet"]
        self.runs = {"RUN": f + "/run", "CLM": f + "/clm", "FT": f + "/ft", "CMP": f + "/cmp",
                     "HF": f + "/hf"}
        self.setup(["train"] + self.tiny + ["--out", self.runs["RUN"]])
        self.setup(["train"] + self.tiny + ["--set", "train.objective=clm", "--out",
                                            self.runs["CLM"]])
        # A run stopped at step 1 of 2: what the set-ups that resume a run resume.
        self.runs["STOPPED"] = f + "/stopped"
        self.setup(["train"] + self.tiny + ["--stop-after", "1", "--out", self.runs["STOPPED"]])
        self.ft_base = ["--quiet", "--set", "threads=4", "--set", "max_train_examples=60",
                        "--set", "epochs=1", "--set", "eval_every=0"]
        self.setup(["finetune", "--from", self.runs["RUN"], "--out", self.runs["FT"], "--task",
                    "kjv-testament"] + self.ft_base)
        self.cmp_base = ["--config", "configs/compare_smoke.toml", "--seeds", "1", "--schemes",
                         "none", "--set", "train.steps=2", "--set", "train.eval_every=0",
                         "--no-plot", "--jobs", "1"]
        self.setup(["compare"] + self.cmp_base + ["--out", self.runs["CMP"]])
        os.makedirs(self.runs["HF"])
        for name in ("config.json", "model.safetensors"):
            shutil.copy(os.path.join(REPO, "tests", "reference", "hf", "hf_roformer_tiny", name),
                        self.runs["HF"])
        with open(os.path.join(self.runs["HF"], "vocab.txt"), "w") as fh:
            fh.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] +
                               [f"w{i}" for i in range(5, 60)]) + "\n")
        # The keys, as the binary wrote them; the words of each enum key, as it refuses others.
        self.keys = config_keys(self.runs["RUN"], "config.toml")
        self.ft_keys = config_keys(self.runs["FT"], "finetune.toml")
        self.words = {k: enum_words(self.bin, self.cwd0, k) for k, v in self.keys.items()
                      if v.startswith('"')}
        self.fixture_state = self.tree_state(self.fix)

    def load_floor_kb(self):
        """The least `ulimit -v` (KiB, to 1 MiB) under which the dynamic loader maps the binary
        and its libraries: below it no program of ours runs at all (exit 127)."""
        if getattr(self, "_floor", None) is None:
            def loads(kb):
                def limit():
                    resource.setrlimit(resource.RLIMIT_AS, (kb * 1024, kb * 1024))
                try:
                    p = subprocess.run([self.bin, "--help"], cwd=self.cwd0, capture_output=True,
                                       stdin=subprocess.DEVNULL, preexec_fn=limit, timeout=60)
                except OSError:
                    return False
                return b"error while loading shared libraries" not in p.stderr
            lo, hi = 1024, 4 * 1024 * 1024
            while hi - lo > 1024:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if loads(mid) else (mid, hi)
            self._floor = hi
        return self._floor

    def new_cwd(self, d):
        os.makedirs(d)
        for name in ("configs", "data", "scripts"):
            os.symlink(os.path.join(REPO, name), os.path.join(d, name))
        return d

    def setup(self, argv):
        rc, out, err = run_quiet([self.bin] + argv, self.cwd0, timeout=600)
        if rc != 0:
            sys.exit(f"fuzz_cli: set-up failed (exit {rc}): {' '.join(argv)}\n{out}{err}")

    @staticmethod
    def tree_state(top):
        state = {}
        for root, dirs, files in os.walk(top):
            for n in files + dirs:
                p = os.path.join(root, n)
                if n == "lock":
                    continue  # rewritten by every reader that locks the run
                st = os.lstat(p)
                state[p] = (st.st_mode, st.st_size, st.st_mtime_ns if n not in dirs else 0)
        return state


# ---------------------------------------------------------------------------------------------
# One case: an argv drawn from the tables, in its own directory.
class Case:
    def __init__(self, s, seed, k):
        self.s, self.seed, self.k = s, seed, k
        self.id = f"s{seed}c{k}"
        self.rng = random.Random(f"{seed}:{k}")
        self.dir = os.path.join(s.w, "cases", self.id)
        self.prepare = []  # (what, path) made before the case runs
        self.contents = {}  # a user's file of a kind: its bytes
        self.links = []  # (hard | sym, target, name) made after the paths above
        self.ours = []  # outputs of ours made before the case (with a mark holding their hash)
        self.copies = []  # (cp-al, original, copy) | (record, what deleted, run copy)
        self.deep = None  # the deepest parent a deep-out case makes before it runs
        self.mem_kb = s.mem_kb
        rng = self.rng
        self.cmd = rng.choice(s.commands)
        self.opts = s.b.options[self.cmd]
        writes = [o for o in self.opts if o["kind"] == "write-file"]
        self.concurrent = bool(writes) and rng.random() < 0.2
        if rng.random() < 0.03:
            self.mem_kb = rng.choice([160000, 400000])  # a small `ulimit -v`
        self.argv = self.base()
        # A hostile set-up (KINDS) comes from a generator of its own, so that a case without
        # one is the case its seed drew before the set-ups existed; half the cases with one
        # keep the working command line, so that the set-up is what they meet.
        self.krng = random.Random(f"{seed}:{k}:kind")
        self.kind_drawn = not self.concurrent and self.krng.random() < KIND_SHARE
        plain = self.kind_drawn and self.krng.random() < 0.5
        # Writers at once are judged on what they wrote: mostly a command that works.
        n = 0 if plain or self.concurrent and rng.random() < 0.8 else \
            rng.choice([1, 1, 1, 2, 2, 3])
        # A required option replaced by a hostile value ends most cases at the first check:
        # the others are drawn three times as often, so that cases reach the work.
        weights = [1 if o["required"] else 3 for o in self.opts]
        for _ in range(n):
            self.mutate(rng.choices(self.opts, weights)[0])
        if self.concurrent:
            self.writer_opt = rng.choice(writes)
            self.shared = os.path.join(self.dir, "shared" + rng.choice(self.writer_opt["suffixes"]))
            self.set_option(self.writer_opt["name"], self.shared)
            for needed in re.findall(r"With (--[a-z-]+)", self.writer_opt["desc"]):
                self.set_option(needed, "")  # "--confusion: With --test-split: …"
            self.variants = self.writer_variants()
        self.kind, self.protect, self.protect_failed = None, [], []
        self.draw_kind()

    # The hostile set-up (KINDS), if the case drew one.
    def draw_kind(self):
        krng = self.krng
        if not self.kind_drawn:
            return
        fits = [k for k in KINDS if self.kind_fits(k)]
        if fits:  # ulimit-v fits every command: drawn as often as one of the others
            self.kind = krng.choices(fits, [1 if k == "ulimit-v" else 3 for k in fits])[0]
            getattr(self, "kind_" + self.kind.replace("-", "_"))(krng)

    def opts_of(self, *kinds):
        return [o for o in self.opts if o["kind"] in kinds]

    def run_options(self):
        """The options that name a run of ours to read (or, for train, --resume's --out)."""
        if self.cmd == "train":
            return [o for o in self.opts if o["name"] == "--out"] if any(
                o["name"] == "--resume" for o in self.opts) else []
        return [o for o in self.opts_of("read-dir") if self.cmd in ("eval", "finetune",
                                                                    "generate", "inspect")
                or not o["positional"]]

    def kind_fits(self, kind):
        if kind in ("lock-hardlink", "lock-symlink", "out-hardlink", "out-symlink"):
            return bool(self.opts_of("write-file"))
        if kind == "deep-out":
            return bool(self.opts_of("write-file", "write-dir"))
        if kind in ("run-cp-al", "record-deleted"):
            return bool(self.run_options()) and self.cmd not in ("import-hf", "classify",
                                                                 "extrapolate")
        return kind == "ulimit-v"

    def user_file(self, name, krng):
        path = self.made("user_" + name)
        self.contents[path] = krng.choice(["", "12345\n", "my own notes\n"])
        return path

    def kind_output(self, krng):
        o = krng.choice(self.opts_of("write-file"))
        out = self.out("out" + krng.choice(o["suffixes"]))
        self.set_option(o["name"], out)
        return out

    def kind_lock_hardlink(self, krng):
        """NAME.lock is a hard link to a user's file (empty, digits, or notes)."""
        out = self.kind_output(krng)
        user = self.user_file("lockbase", krng)
        self.links.append(("hard", user, out + ".lock"))
        self.protect += [user, out + ".lock"]

    def kind_lock_symlink(self, krng):
        """NAME.lock is a symbolic link to a user's file."""
        out = self.kind_output(krng)
        user = self.user_file("lockbase", krng)
        self.links.append(("sym", user, out + ".lock"))
        self.protect += [user, out + ".lock"]

    def kind_out_hardlink(self, krng):
        """An output of ours (its mark holds its sha256) that the user hard-linked elsewhere:
        replacing the output must leave the other name's bytes as they were."""
        out = self.kind_output(krng)
        self.ours.append(out)
        self.links.append(("hard", out, self.made("user_keep" + os.path.splitext(out)[1])))
        self.protect.append(self.made("user_keep" + os.path.splitext(out)[1]))

    def kind_out_symlink(self, krng):
        """The output's name is a symbolic link to a user's file."""
        out = self.kind_output(krng)
        user = self.user_file("target" + os.path.splitext(out)[1], krng)
        self.links.append(("sym", user, out))
        self.protect += [user, out]

    def kind_run_cp_al(self, krng):
        """A run copied with `cp -al` (every file, the lock too, shared with the original):
        whatever the command does with the copy, the original keeps every byte."""
        orig, copy = self.made("user_run"), self.made("alcopy")
        self.copies.append(("cp-al", orig, copy))
        if krng.random() < 0.5:  # the original's lock is a hard link to the user's notes
            self.links.append(("hard", self.user_file("notes", krng), os.path.join(orig, "lock")))
        self.use_run(copy, krng)
        self.protect.append(orig)

    def kind_record_deleted(self, krng):
        """A run with a record file deleted (checkpoint.json, its run_files key, corpus.json):
        read or resumed, it succeeds or is refused in one line; refused, every byte stays."""
        run = self.made("recrun")
        self.copies.append(("record", krng.choice(["checkpoint.json", "run_files",
                                                    "corpus.json"]), run))
        self.use_run(run, krng)
        self.protect_failed.append(run)

    def run_source(self):
        return self.s.runs[{"generate": "CLM", "train": "STOPPED"}.get(self.cmd, "RUN")]

    def use_run(self, run, krng):
        o = krng.choice(self.run_options())
        self.set_option(o["name"], run)
        if self.cmd == "train":
            self.set_option("--resume", "")

    def kind_deep_out(self, krng):
        """An output whose path is a few characters short of PATH_MAX (or at it), its deepest
        parents made or not: refused or written, no parent is left by a failure and no file
        the command writes is past PATH_MAX."""
        o = krng.choice(self.opts_of("write-file", "write-dir"))
        name = "out" + (krng.choice(o["suffixes"]) if o["kind"] == "write-file" else "")
        want = PATH_MAX - krng.choice([1, 2, 8, 16, 40, 100, 200, 400])
        parts, path = [], self.dir
        while len(path) + 1 + len(name) < want:
            part = "d" * min(200, want - len(path) - 2 - len(name))
            parts.append(part)
            path = os.path.join(path, part)
        made = len(parts) - krng.choice([0, 0, 1, 2])
        if parts and made > 0:
            self.deep = os.path.join(self.dir, *parts[:made])
        self.set_option(o["name"], os.path.join(path, name))

    def kind_ulimit_v(self, krng):
        """A tight `ulimit -v`: our one error line, never a signal from a library's start."""
        self.mem_kb = self.s.load_floor_kb() + krng.choice(ULIMIT_STEPS_KB)

    # The value of an option of each kind.
    def value(self, o):
        rng, s, kind = self.rng, self.s, o["kind"]
        if kind == "int":
            return pick(rng, INTS)
        if kind == "small":
            return pick(rng, SMALL + INTS, edge=0.7)
        if kind == "float":
            return pick(rng, FLOATS)
        if kind == "text":
            return rng.choice(TEXTS + [""])
        if kind == "choice":
            return rng.choice(o["choices"] + ["", "zz", LONG_NAME] if o["choices"] else
                              ["", "zz", LONG_NAME, "1"])
        if kind == "set":
            return self.set_value(o)
        if kind == "read-dir":
            return rng.choice([s.runs["RUN"]] * 3 + [s.runs["CLM"], s.runs["FT"], self.made("copy-cmp"),
                              s.runs["HF"], self.made("missing"), self.made("file"),
                              self.made("dir"), self.made("link-run"), self.made("link-missing"),
                              ""])
        if kind == "read-file":
            return rng.choice(["configs/tiny.toml", "configs/compare_smoke.toml",
                               os.path.join(s.runs["RUN"], "tokenizer.json"), self.made("missing"),
                               self.made("file"), self.made("dir"), self.made("link-missing"),
                               "/dev/null", ""])
        if kind == "write-file":
            suffix = rng.choice(o["suffixes"])
            return rng.choice([self.out("out" + suffix)] * 4 + [
                self.out(LONG_NAME + suffix), self.made("dir"), self.made("link-dir"),
                self.made("user" + suffix), self.made("link-missing"),
                self.out("no_such_dir/out" + suffix), ""])
        if kind == "write-dir":
            return rng.choice([self.out("out")] * 4 + [
                self.out(LONG_NAME[:200]), self.made("dir"), self.made("user-dir"),
                self.made("file"), self.made("link-dir"), self.made("copy-run"), ""])
        return ""

    def set_value(self, o):
        rng, s = self.rng, self.s
        keys = s.ft_keys if self.cmd == "finetune" else s.keys
        if rng.random() < 0.05:
            return rng.choice(["", "nokey", "train.zz=1", "=1", "zz.zz=1"])
        # The keys the option's help names ("data.*, train.threads, …"), more often than others.
        named = [k for k in keys for m in re.findall(r"\b([a-z]+\.(?:\*|[a-z_]+))", o["desc"])
                 if k == m or (m.endswith(".*") and k.startswith(m[:-1]))]
        key = rng.choice(named if len(named) >= 3 and rng.random() < 0.6 else sorted(keys))
        default = keys[key]
        if key in s.words and s.words[key]:
            v = rng.choice(s.words[key] + ["", "zz"])
        elif default.startswith('"'):
            v = rng.choice(["", self.made("missing"), self.made("file"), self.made("dir"),
                            LONG_NAME, "zz"])
        elif default in ("true", "false"):
            v = rng.choice(BOOLS)
        elif re.fullmatch(r"-?\d+", default):
            v = pick(rng, SMALL + INTS, edge=0.6)
        else:
            v = pick(rng, FLOATS)
        return f"{key}={v}"

    def made(self, what):
        """A path of a kind the case makes before it runs (in its own directory)."""
        path = os.path.join(self.dir, "made_" + re.sub(r"[^a-z0-9.]", "_", what))
        if (what, path) not in self.prepare:
            self.prepare.append((what, path))
        return path

    def out(self, name):
        return os.path.join(self.dir, name)

    # The command line.
    def base(self):
        s, cmd = self.s, self.cmd
        argv = [cmd]
        if cmd == "train":
            argv += s.tiny
        elif cmd == "compare":
            argv += s.cmp_base
        elif cmd == "finetune":
            argv += s.ft_base + ["--task", "kjv-testament"]
        for o in self.opts:
            if not o["required"] or o["positional"]:
                continue
            if o["name"] in argv:
                continue
            argv += [o["name"], self.sane(o)]
        self.positions = []
        for o in self.opts:
            if o["positional"] and (o["required"] or cmd == "classify"):
                self.positions.append(len(argv))
                argv.append(self.sane(o))
        return argv

    def sane(self, o):
        """A value that works, for the options a command needs."""
        s, kind, name = self.s, o["kind"], o["name"].lstrip("-")
        if kind == "read-dir":
            return {"classify": s.runs["FT"], "generate": s.runs["CLM"],
                    "extrapolate": self.made("copy-cmp"), "import-hf": s.runs["HF"]}.get(self.cmd,
                                                                               s.runs["RUN"])
        if kind in ("write-dir", "write-file"):
            return self.out("out" + (o["suffixes"][0] if kind == "write-file" else ""))
        if kind == "text":
            return "In the beginning [MASK] created"
        if kind in ("int", "small"):
            return {"head-dim": "16", "length": "32"}.get(name, "8")
        return o["default"] or "1"

    def set_option(self, name, value):
        a = self.argv
        opt = next(o for o in self.opts if o["name"] == name)
        if opt["positional"]:
            if self.positions:
                a[self.rng.choice(self.positions)] = value
            else:
                self.positions.append(len(a))
                a.append(value)
        elif opt["kind"] == "flag":
            if name not in a:
                a.append(name)
        elif name in a and not opt["many"]:
            a[a.index(name) + 1] = value
        else:
            a += [name, value]

    def mutate(self, o):
        self.set_option(o["name"], self.value(o) if o["kind"] != "flag" else "")

    def writer_variants(self):
        """2–3 writers of the shared file: the same command, or each with another value of a
        numeric option (another seed, size, layer), so that their bytes may differ."""
        rng = self.rng
        n = rng.choice([2, 2, 3])
        nums = [o for o in self.opts if o["type"] in ("UINT", "INT") and not o["positional"]
                and o["default"]]
        if not nums or rng.random() < 0.3:
            return [list(self.argv) for _ in range(n)]
        o = rng.choice(nums + [o for o in nums if "seed" in o["name"]] * 3)
        values = rng.sample(["0", "1", "2", "3", "8", "16", "64"], n)
        out = []
        for v in values:
            a = list(self.argv)
            if o["name"] in a:
                a[a.index(o["name"]) + 1] = v
            else:
                a += [o["name"], v]
            out.append(a)
        return out

    # Making the paths the case uses, and running it.
    def materialise(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        self.s.new_cwd(self.dir)
        for what, path in self.prepare:
            if what == "user_run":
                shutil.copytree(self.run_source(), path, symlinks=True)
            elif what == "file" or what.startswith("user_"):
                open(path, "w").write(self.contents.get(path, "my own notes\n"))
            elif what.startswith("user"):
                open(path, "w").write("my own notes\n")
            elif what in ("dir", "user-dir"):
                os.makedirs(path)
                if what == "user-dir":
                    open(os.path.join(path, "notes.txt"), "w").write("keep me\n")
            elif what == "link-run":
                os.symlink(self.s.runs["RUN"], path)
            elif what == "link-missing":
                os.symlink(os.path.join(self.dir, "nowhere"), path)
            elif what == "link-dir":
                os.makedirs(path + ".target")
                os.symlink(path + ".target", path)
            elif what == "copy-run":
                shutil.copytree(self.s.runs["RUN"], path)
            elif what == "copy-cmp":  # extrapolate writes into the comparison it reads
                shutil.copytree(self.s.runs["CMP"], path, symlinks=True)
        for path in self.ours:
            data = b"a,b\n1,2\n"
            open(path, "wb").write(data)
            open(path + ".written-by", "w").write(
                f"roformer-cpp roformer wrote {os.path.basename(path)}; sha256 "
                f"{hashlib.sha256(data).hexdigest()}\n")
        for what, a, b in self.copies:
            if what == "cp-al":  # the original's own links first: the copy shares them
                for how, target, name in [x for x in self.links if x[2].startswith(a + "/")]:
                    if os.path.lexists(name):
                        os.remove(name)
                    os.link(target, name)
                    self.links.remove((how, target, name))
                subprocess.run(["cp", "-al", a, b], check=True)
            else:
                shutil.copytree(self.run_source(), b, symlinks=True)
                delete_record(b, a)
        for how, target, name in self.links:
            if os.path.lexists(name):
                os.remove(name)
            (os.link if how == "hard" else os.symlink)(target, name)
        if self.deep:
            os.makedirs(self.deep)
        return self.snapshot()

    def users(self, state):
        """The user's files among a snapshot: the notes, folders and links the case made."""
        mine = [p for what, p in self.prepare if what == "file" or what.startswith(("user",
                                                                                      "link"))]
        return [p for p in state if any(p == m or p.startswith(m + "/") for m in mine)]

    def snapshot(self, unreadable=None):
        state = {}
        for root, dirs, files in os.walk(self.dir, onerror=unreadable is not None and (
                lambda e: unreadable.append(f"{e.filename}: {e.strerror}"))):
            for n in dirs + files:
                p = os.path.join(root, n)
                if os.path.islink(p) and root == self.dir and n in ("configs", "data", "scripts"):
                    dirs[:] = [d for d in dirs if d != n]
                    continue
                if os.path.isfile(p) and not os.path.islink(p):
                    state[p] = hashlib.sha256(open(p, "rb").read()).hexdigest()
                else:
                    state[p] = "link" if os.path.islink(p) else "dir"
        return state

    def shell(self, argv):
        mem = f"ulimit -v {self.mem_kb}; " if self.mem_kb != self.s.mem_kb else ""
        if self.kind:  # the set-up is made by the fuzzer: rerun the case to see it
            mem = f"[{self.kind}: made by --seed {self.seed} --case {self.k}] " + mem
        return f"cd {shlex.quote(self.dir)} && {mem}" + " ".join(
            shlex.quote(x) for x in [self.s.bin] + argv)

    def start(self, argv):
        mem = self.mem_kb
        s = self.s

        def limits():
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if mem:
                resource.setrlimit(resource.RLIMIT_AS, (mem * 1024, mem * 1024))
            os.setsid()
        return subprocess.Popen([s.bin] + argv, cwd=self.dir, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=s.env,
                                preexec_fn=limits)

    def finish(self, p):
        """(exit status as 0..255, stdout, stderr, the signal we sent or 0)."""
        sent = 0
        try:
            out, err = p.communicate(timeout=self.s.timeout)
        except subprocess.TimeoutExpired:
            sent = signal.SIGTERM
            p.send_signal(sent)
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
                return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), sent
        rc = p.returncode if p.returncode >= 0 else 128 - p.returncode
        return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), sent


# ---------------------------------------------------------------------------------------------
# The invariants.
class Judge:
    def __init__(self, s):
        self.s = s
        self.checks = 0
        self.stopped = 0  # cases that ran past the time limit and ended on SIGTERM
        self.violations = []
        self.skipped = []  # cases whose binary could not start (exec under a tight ulimit -v)
        self.last = ""  # the last case's exit status and last line, for --verbose

    def check(self, ok, case, what, argv=None):
        self.checks += 1
        if not ok:
            command = case.shell(argv or case.argv) if not case.concurrent else \
                "(" + " & ".join(case.shell(a) for a in case.variants) + "; wait)"
            line = (f"VIOLATION {case.id} [{what}]; rerun: {SELF} --binary {case.s.bin} "
                    f"--seed {case.seed} --case {case.k}; command: {command}")
            self.violations.append(line)
            print(line, flush=True)
        return ok

    def exit_status(self, case, argv, rc, err, sent):
        self.stopped += bool(sent)
        self.last = f"exit {rc}: {last_line(err)[:160]}"
        if rc is None:
            return self.check(False, case, f"hang: still running {case.s.timeout} s and 10 s "
                                           f"after SIGTERM", argv)
        allowed = {0, 2} | ({128 + sent} if sent else set())
        return self.check(rc in allowed, case, f"exit {rc}: {last_line(err)}", argv)

    def message(self, case, argv, rc, out, err):
        m = CRASH.search(err) or CRASH.search(out)
        self.check(not m, case, f"crash report: {m.group(0) if m else ''}", argv)
        if rc == 2:
            errors = [l for l in err.splitlines() if l.startswith("error")]
            self.check(len(errors) == 1, case, f"exit 2 with {len(errors)} error lines: "
                                               f"{last_line(err)}", argv)

    def finite(self, case, argv, out, before):
        if case.cmd != "generate":  # generate's stdout is the model's own text
            m = NONFINITE.search(out)
            self.check(not m, case, f"exit 0 printed a non-finite number: "
                                    f"{context(out, m) if m else ''}", argv)
        for path, digest in case.snapshot().items():
            if before.get(path) == digest or digest in ("dir", "link"):
                continue
            if path.endswith((".csv", ".md", ".json")) and os.path.getsize(path) < 50_000_000:
                bad = nonfinite_in(path)
                self.check(not bad, case, f"exit 0 wrote a non-finite number into "
                                          f"{os.path.relpath(path, case.dir)}: {bad}", argv)

    def wrote(self, case, argv, out, cwd):
        named = wrote_paths(out, cwd)
        for path in named:
            self.check(os.path.lexists(path), case, f"said it wrote {path}, which is missing",
                       argv)
            if os.path.isfile(path) and not path.endswith(".png") and not in_run(path):
                self.check(mark_ok(path), case, f"{path}: its .written-by mark is missing or "
                                                f"does not hold the file's sha256", argv)
        return named

    def kinds(self, case, argv, rc, before, after, unreadable):
        """The invariants of a case's hostile set-up (KINDS)."""
        if not case.kind:
            return
        # A run's own lock (one name, ours) holds the pid of its last holder: a reader
        # rewrites it. The original of a cp -al copy shares it, and keeps it too.
        kept = [p for p in before for t in case.protect if p == t or p.startswith(t + "/")]
        kept += [p for p in before for t in (case.protect_failed if rc != 0 else [])
                 if p.startswith(t + "/") and os.path.basename(p) != "lock"]
        changed = [p for p in kept if after.get(p) != before[p]]
        self.check(not changed, case, f"{case.kind}: changed or removed a file that was there: "
                                      f"{short(changed, case)}", argv)
        self.check(not unreadable, case, f"{case.kind}: left what cannot be read: "
                                         f"{'; '.join(unreadable[:2])[:300]}", argv)
        long = [p for p in after if len(p) >= PATH_MAX]
        self.check(not long, case, f"{case.kind}: wrote a path past PATH_MAX ({PATH_MAX}): "
                                   f"{short(long, case)}", argv)

    def litter(self, case, argv, rc, before, after):
        temps = [p for p in after if re.search(r"\.tmp-|\.partial-", os.path.basename(p))]
        self.check(not temps, case, f"left temporaries: {short(temps, case)}", argv)
        changed = [p for p in case.users(before) if after.get(p) != before[p]]
        self.check(not changed, case, f"changed or removed the user's files: "
                                      f"{short(changed, case)}", argv)
        if rc not in (0, None):
            new = [p for p in after if p not in before and not resumable(p, case.dir)]
            self.check(not new, case, f"a failure (exit {rc}) left {short(new, case)}", argv)
        state = self.s.tree_state(self.s.fix)
        if self.check(state == self.s.fixture_state, case,
                      "changed the session's runs: " + short(
                          [p for p in set(state) | set(self.s.fixture_state)
                           if state.get(p) != self.s.fixture_state.get(p)], case), argv):
            return
        self.s.fixture_state = state  # report each change once


def delete_record(run, what):
    """Deletes one record file of a run (or checkpoint.json's run_files key)."""
    if what == "run_files":
        path = os.path.join(run, "checkpoint.json")
        record = json.load(open(path, encoding="utf-8"))
        record.pop("run_files", None)
        open(path, "w", encoding="utf-8").write(json.dumps(record, indent=2) + "\n")
    elif os.path.exists(os.path.join(run, what)):
        os.remove(os.path.join(run, what))


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else "(nothing on stderr)"


def context(text, m):
    a = text.rfind("\n", 0, m.start()) + 1
    b = text.find("\n", m.end())
    return text[a:b if b >= 0 else None].strip()[:160]


def short(paths, case):
    names = [os.path.relpath(p, case.dir) for p in sorted(paths)[:4]]
    return ", ".join(n if len(n) < 60 else n[:20] + f"…({len(n)} chars)" for n in names) + \
        (f" (+{len(paths) - 4})" if len(paths) > 4 else "")


def nonfinite_in(path):
    data = open(path, "rb").read().decode("utf-8", "replace")
    if path.endswith(".json"):
        bad = []

        def walk(x):
            if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
                bad.append(repr(x))
            elif isinstance(x, dict):
                for v in x.values():
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)
        try:
            walk(json.loads(data))
        except ValueError:
            return ""  # not JSON: another check's business
        return bad[0] if bad else ""
    for n, line in enumerate(data.splitlines(), 1):
        cells = line.split("|") if path.endswith(".md") else line.split(",")
        for c in cells:
            if NONFINITE_CELL.match(c):
                return f"line {n}: {line.strip()[:120]}"
    return ""


def wrote_paths(out, cwd):
    """The files (and directories) each "wrote X" line names; names after "X:" or ", " too."""
    paths = []
    for m in re.finditer(r"(?:^|\s)wrote (\S+?)([:,]?)(?:\s|$)(.*)", out, re.MULTILINE):
        first, sep, rest = m.group(1), m.group(2), m.group(3)
        p = os.path.join(cwd, first)
        paths.append(p)
        names = re.findall(r"(?:^|[\s,])([A-Za-z0-9_.-]+\.[A-Za-z0-9]+)(?=[\s,]|$)", rest)
        if sep == ":" and os.path.isdir(p):
            paths += [os.path.join(p, n) for n in names]
        elif sep == ",":
            paths += [os.path.join(os.path.dirname(p), n) for n in names]
    return paths


def mark_ok(path):
    try:
        mark = open(path + ".written-by", encoding="utf-8").read()
    except OSError:
        return False
    m = re.fullmatch(r"roformer-cpp \S+ wrote (.+); sha256 ([0-9a-f]{64})\n?", mark)
    return bool(m) and m.group(1) == os.path.basename(path) and \
        m.group(2) == hashlib.sha256(open(path, "rb").read()).hexdigest()


def in_run(path):
    """A file of a run directory: the run's manifest vouches for it, not a mark."""
    return os.path.exists(os.path.join(os.path.dirname(path), "checkpoint.json"))


def resumable(path, top):
    """Part of what a stopped command leaves to continue: a new entry of the case's directory
    (a run, a comparison) that holds a checkpoint somewhere."""
    first = os.path.join(top, os.path.relpath(path, top).split(os.sep)[0])
    return any("checkpoint.json" in files for _, _, files in os.walk(first))


# ---------------------------------------------------------------------------------------------
def run_case(case, judge):
    before = case.materialise()
    if not case.concurrent:
        try:
            p = case.start(case.argv)
        except OSError as e:  # exec refused under a `ulimit -v`: the binary never ran
            judge.skipped.append(f"{case.id}: not started: {e.strerror}")
            return
        rc, out, err, sent = case.finish(p)
        judge.exit_status(case, case.argv, rc, err, sent)
        judge.message(case, case.argv, rc, out, err)
        if rc == 0:
            judge.finite(case, case.argv, out, before)
            judge.wrote(case, case.argv, out, case.dir)
        unreadable = []
        after = case.snapshot(unreadable)
        judge.kinds(case, case.argv, rc, before, after, unreadable)
        judge.litter(case, case.argv, rc, before, after)
        return
    # Writers of one file at once, each waited for on its own thread (its end time is known).
    starts, ends, results = [], [None] * len(case.variants), [None] * len(case.variants)
    procs = []
    for argv in case.variants:
        procs.append(case.start(argv))
        starts.append(time.monotonic())

    def wait(i):
        results[i] = case.finish(procs[i])
        ends[i] = time.monotonic()
    threads = [threading.Thread(target=wait, args=(i,)) for i in range(len(procs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    said = []
    for i, (argv, (rc, out, err, sent)) in enumerate(zip(case.variants, results)):
        judge.exit_status(case, argv, rc, err, sent)
        judge.message(case, argv, rc, out, err)
        if rc == 0 and os.path.realpath(case.shared) in map(os.path.realpath,
                                                          wrote_paths(out, case.dir)):
            said.append(i)
    shared = case.shared
    if os.path.isfile(shared) and said:
        judge.check(mark_ok(shared), case, f"{len(said)} of {len(procs)} writers said wrote; "
                                           f"the mark does not hold the file's sha256")
    # Two writers that ran side by side for OVERLAP_S cannot both have published: each that
    # said "wrote" must find its own bytes there. (Writers that barely overlapped may have
    # run one after the other, the later one replacing a file of ours, as any rerun does.)
    side_by_side = [i for i in said for j in said if i != j and
                    min(ends[i], ends[j]) - max(starts[i], starts[j]) >= OVERLAP_S]
    there = hashlib.sha256(open(shared, "rb").read()).hexdigest() if os.path.isfile(
        shared) else "missing"
    for i in sorted(set(side_by_side)):  # run each alone for its bytes
        alone = os.path.join(case.dir, f"alone{i}" + os.path.splitext(shared)[1])
        a = [alone if x == shared else x for x in case.variants[i]]
        rc, _, _ = run_quiet([case.s.bin] + a, case.dir, timeout=case.s.timeout, env=case.s.env)
        mine = hashlib.sha256(open(alone, "rb").read()).hexdigest() if rc == 0 and \
            os.path.isfile(alone) else None
        judge.check(mine is None or mine == there, case,
                    f"{len(said)} of {len(procs)} writers running side by side said wrote, "
                    f"but writer {i + 1}'s bytes are not in {os.path.basename(shared)}")
    after = case.snapshot()
    temps = [p for p in after if re.search(r"\.tmp-|\.partial-", os.path.basename(p))]
    judge.check(not temps, case, f"concurrent writers left temporaries: {short(temps, case)}")


def commit_seed():
    """A seed of its own for every commit (seeds a fixed list has not tried), from the commit's
    hash; outside a git checkout, a fixed one. (seed, where it came from)."""
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        head = ""
    if not re.fullmatch(r"[0-9a-f]{40}", head):
        return COMMIT_SEED_FALLBACK, "(not a git checkout: the fixed fallback)"
    return 1000 + int(head[:8], 16) % 1_000_000, f"from commit {head[:12]}"


COMMIT_SEED_FALLBACK = 65


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True, help="the roformer binary to fuzz")
    ap.add_argument("--work", default=None, help="scratch directory (emptied first)")
    ap.add_argument("--seeds", default="1", help="comma-separated seeds, or A-B; the word "
                    "'commit' is a seed taken from the checkout's commit (printed first)")
    ap.add_argument("--cases", type=int, default=100, help="cases per seed")
    ap.add_argument("--seed", type=int, help="with --case: rerun one case")
    ap.add_argument("--case", type=int, help="the case number of --seed to rerun")
    ap.add_argument("--timeout", type=float, default=20, help="seconds a case may run")
    ap.add_argument("--mem-mb", type=int, default=4096, help="ulimit -v of every case (MiB)")
    ap.add_argument("--commands", default="", help="only these subcommands (comma-separated)")
    ap.add_argument("--list", action="store_true", help="print the cases, run nothing")
    ap.add_argument("--verbose", action="store_true",
                    help="a line per case: its command, set-up, exit status and last line")
    args = ap.parse_args()
    if args.work is None:
        args.work = os.path.join(REPO, "build", "test_runs", "fuzz_cli")
    if args.seed is not None:
        plan = [(args.seed, k) for k in ([args.case] if args.case is not None else
                                         range(args.cases))]
    else:
        seeds = []
        for part in args.seeds.split(","):
            if part == "commit":
                seed, where = commit_seed()
                print(f"fuzz_cli: seed {seed} {where}; rerun: {SELF} --binary {args.binary} "
                      f"--seeds {seed} --cases {args.cases}", flush=True)
                seeds.append(seed)
                continue
            a, _, b = part.partition("-")
            seeds += list(range(int(a), int(b or a) + 1))
        plan = [(seed, k) for seed in seeds for k in range(args.cases)]
    started = time.time()
    s = Session(args)
    judge = Judge(s)
    kinds, set_ups = {}, {}
    for seed, k in plan:
        case = Case(s, seed, k)
        if args.list:
            print(case.id, case.shell(case.argv) if not case.concurrent else
                  "(" + " & ".join(case.shell(a) for a in case.variants) + "; wait)")
            continue
        run_case(case, judge)
        if args.verbose:
            print(f"{case.id} {case.cmd} {case.kind or '-'}: {judge.last}", flush=True)
        kinds[case.cmd] = kinds.get(case.cmd, 0) + 1
        if case.kind:
            set_ups[case.kind] = set_ups.get(case.kind, 0) + 1
        if not judge.violations or judge.violations[-1].split()[1] != case.id:
            shutil.rmtree(case.dir, ignore_errors=True)  # keep only the cases that failed
    print(f"fuzz_cli: {len(plan)} cases in {time.time() - started:.0f} s "
          f"({', '.join(f'{c} {n}' for c, n in sorted(kinds.items()))}); "
          f"{judge.stopped} ran past {args.timeout:g} s and were stopped by SIGTERM; "
          f"set-ups: {', '.join(f'{k} {n}' for k, n in sorted(set_ups.items())) or 'none'}")
    for line in judge.skipped:
        print(f"fuzz_cli: skipped {line}")
    print(f"fuzz_cli: {len(plan)} cases, {judge.checks} invariants checked, "
          f"{len(judge.violations)} violations")
    print("fuzz_cli: PASS" if not judge.violations else "fuzz_cli: FAIL")
    sys.exit(1 if judge.violations else 0)


if __name__ == "__main__":
    main()
