#!/usr/bin/env python3
"""Stage 7 — train: draw one run's learning curves from RUN/metrics.csv (matplotlib, Agg).

    python3 scripts/plot_run.py RUN [--out PNG] [--force] [--unigram NATS] [--roformer BIN]

Left: training and validation loss against the step, with the unigram entropy as a line —
the loss of a model that knows only how often each token occurs (src/data/prepare.cpp,
unigram_entropy; docs/training.md "What to expect"). A curve below that line uses context.
Right: validation accuracy (share of the scored tokens whose top guess is right).

metrics.csv's columns are docs/training.md's table: step,tokens,train_loss,val_loss,
val_accuracy,lr,grad_norm,tokens_per_s,elapsed_s; val_loss and val_accuracy are empty on
rows without an evaluation. The run directory does not store the unigram entropy, so this
script asks `roformer eval --run RUN`, which rebuilds the same fixed validation set and
prints the number training printed ("unigram entropy X"); --unigram NATS skips that call.

The picture goes to RUN/curves.png unless --out says otherwise. An existing file is never
replaced without --force, and even then only if this script drew it (its Software text chunk
is SOFTWARE); the picture is written to a temporary name first, then renamed over it.
Exit codes: 0 written, 2 bad arguments / a refused or failed step, 3 matplotlib missing.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys

from script_outputs import Refusal, check_replaceable, plotting, save  # the pictures' one rule
from script_outputs import number as checked_number  # a cell's one rule

SOFTWARE = "roformer-cpp scripts/plot_run.py"  # the PNG's Software text chunk: ours
COLUMNS = ["step", "train_loss", "val_loss", "val_accuracy"]


def number(text):
    """A metrics.csv cell as a float; an empty cell (no evaluation on that row) is None."""
    text = (text or "").strip()
    return float(text) if text else None


def read_metrics(run):
    """{column: [(step, value), …]} for the columns plotted, empty cells left out."""
    path = os.path.join(run, "metrics.csv")
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise Refusal(f"cannot read {path} ({e.strerror}); is {run} a run directory from "
                      "`roformer train --out`?")
    if not rows:
        raise Refusal(f"{path} has no rows yet; train for at least train.log_every steps")
    missing = [c for c in COLUMNS if c not in rows[0]]
    if missing:
        raise Refusal(f"{path} lacks the column(s) {', '.join(missing)}; it is not a "
                      "`roformer train` metrics file")
    series = {c: [] for c in COLUMNS[1:]}
    for line, row in enumerate(rows, start=2):
        try:
            step = checked_number(path, line, row, "step", int)
            for c in series:
                value = number(row[c])
                if value is not None:
                    series[c].append((step, value))
        except (AttributeError, TypeError, ValueError):  # a short row's missing cell is None
            raise Refusal(f"{path}:{line}: a cell is not a number; the file is damaged")
    return series


def unigram_from_eval(args):
    """The unigram entropy training printed, as `roformer eval --run RUN` prints it again."""
    command = [args.roformer, "eval", "--run", args.run]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        raise Refusal(f"cannot run {args.roformer} ({e.strerror}); build it, pass --roformer "
                      "PATH, or give the value with --unigram NATS")
    found = re.search(r"unigram entropy ([0-9.]+)", done.stdout)
    if done.returncode != 0 or not found:
        last = (done.stderr.strip().splitlines() or ["no unigram entropy in its output"])[-1]
        raise Refusal(f"{' '.join(command)} failed (exit {done.returncode}): {last}; "
                      "or give the value with --unigram NATS")
    return float(found.group(1))


def draw(series, unigram, title, out, plt):
    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(11, 4.2),
                                          gridspec_kw={"width_ratios": [1.6, 1]})
    train, val = series["train_loss"], series["val_loss"]
    if train:
        loss_ax.plot(*zip(*train), color="#1f77b4", lw=1.0, alpha=0.8, label="training loss")
    if val:
        loss_ax.plot(*zip(*val), "o-", color="#d62728", lw=1.6, ms=3, label="validation loss")
    loss_ax.axhline(unigram, color="#7f7f7f", ls="--", lw=1.2,
                    label=f"unigram entropy {unigram:.4f}")
    loss_ax.set_xlabel("step")
    loss_ax.set_ylabel("loss (nats per scored token)")
    loss_ax.set_title("loss; below the dashed line the model uses context", fontsize=10)
    loss_ax.legend()
    loss_ax.grid(alpha=0.3)
    accuracy = series["val_accuracy"]
    if accuracy:
        acc_ax.plot(*zip(*accuracy), "o-", color="#2ca02c", lw=1.6, ms=3)
        last_step, last = accuracy[-1]
        acc_ax.annotate(f"{last:.4f}", (last_step, last), textcoords="offset points",
                        xytext=(-4, -14), ha="right", fontsize=9)
    acc_ax.set_xlabel("step")
    acc_ax.set_ylabel("validation accuracy")
    acc_ax.set_ylim(0, max([0.05] + [1.15 * a for _, a in accuracy]))
    acc_ax.set_title("validation accuracy (top guess right)", fontsize=10)
    acc_ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    save(fig, out, plt, SOFTWARE)


def parse(argv):
    p = argparse.ArgumentParser(
        description="Draw a run's training / validation loss against the unigram entropy, and "
                    "its validation accuracy, from RUN/metrics.csv.",
        epilog="Exit codes: 0 written, 2 bad arguments or a refused step, 3 matplotlib missing. "
               "Example: python3 scripts/plot_run.py runs/classroom")
    p.add_argument("run", metavar="RUN", help="run directory from `roformer train --out`")
    p.add_argument("--out", help="picture to write (default RUN/curves.png)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing picture this script drew")
    p.add_argument("--unigram", type=float, metavar="NATS",
                   help="the unigram entropy training printed (default: ask roformer eval)")
    p.add_argument("--roformer", default="build/roformer", help="the CLI (default build/roformer)")
    args = p.parse_args(argv)
    if args.unigram is not None and not (math.isfinite(args.unigram) and args.unigram >= 0):
        p.error(f"--unigram {args.unigram:g} must be a finite number of nats ≥ 0")
    if args.out is None:
        args.out = os.path.join(args.run, "curves.png")
    return args


def main(argv):
    args = parse(argv)
    libs = plotting("plot_run")
    if libs is None:
        return 3
    plt = libs[2]
    try:
        series = read_metrics(args.run)  # first: a missing run is named as such
        check_replaceable(args.out, SOFTWARE, "plot_run.py", force=args.force)
        unigram = args.unigram if args.unigram is not None else unigram_from_eval(args)
        title = f"run {os.path.basename(os.path.normpath(args.run))} (metrics.csv)"
        draw(series, unigram, title, args.out, plt)
    except Refusal as e:
        print(f"plot_run: {e}", file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
