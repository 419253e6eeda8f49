#!/usr/bin/env python3
"""The fine-tune table of a scripts/finetune_sweep.sh directory.

    scripts/finetune_table.py OUT_DIR [REFERENCE] [--force]   (REFERENCE: default rope_interleaved)

Reads OUT_DIR/ft/<task>/<scheme>/seed<k>/{metrics.csv, floor.json} (the last metrics row is
the model at the end of the fine-tune) and writes OUT_DIR/finetune_results.csv (one row per
task, scheme and seed) and OUT_DIR/table.md: per task, test macro-F1 and accuracy as mean ± std
over seeds for every scheme and for `scratch` (no pre-training), the paired difference in
macro-F1 against REFERENCE over the seeds both have, with its 95 % interval (Student t,
ν = seeds − 1; scripts/paired_diff.py's statistic), and the bag-of-words floor and the
majority class (means over the runs' floor.json files).
Both files replace only what this script wrote (OUT_DIR/<file>.written-by holds its SHA-256;
--force replaces such a file after it was edited, never a file without that mark:
scripts/script_outputs.py). A stray file in ft/, a damaged or empty metrics.csv, floor.json or
finetune.toml, an unknown REFERENCE: one line naming it, exit 2.
"""
import csv
import io
import json
import math
import os
import sys
import tomllib

from paired_diff import interval
from script_outputs import (Refusal, check_text_replaceable, number, read_csv,  # one rule
                            write_text)

OWNER = "roformer-cpp scripts/finetune_table.py"  # the name in OUT/<file>.written-by
USAGE = "usage: scripts/finetune_table.py OUT_DIR [REFERENCE] [--force] (see its header)"


def mean_std(xs):
    """(mean, sample std) of XS; the std is None for one value."""
    m = sum(xs) / len(xs)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else None
    return m, s


def pm(m, s):
    return f"{m:.4f} ± {s:.4f}" if s is not None else f"{m:.4f} ± — (1 run)"


def folders(path, allowed_files=()):
    """The sub-folders of PATH; any other entry (a stray file) is refused, except the names
    ALLOWED_FILES accepts."""
    found = []
    for name in sorted(os.listdir(path)):
        entry = os.path.join(path, name)
        if os.path.isdir(entry) and not os.path.islink(entry):
            found.append(name)
        elif not any(accept(name) for accept in allowed_files):
            raise Refusal(f"{entry} is not a folder; {os.path.dirname(entry)} holds only the "
                          "sweep's <task>/<scheme>/seed<k> folders: move it away")
    return found


def is_seed(name):
    return name.startswith("seed") and name[4:].isdigit()


def is_seed_log(name):  # finetune_sweep.sh writes seed<k>.log beside each seed<k> folder
    return name.endswith(".log") and is_seed(name[:-4])


def read_run(run):
    """The table's fields of one finished fine-tune RUN (metrics.csv, floor.json, finetune.toml)."""
    path = os.path.join(run, "metrics.csv")
    rows = read_csv(path, ["step", "accuracy", "macro_f1", "elapsed_s"],
                    "the fine-tune is damaged: delete its folder and rerun the sweep")
    if not rows:
        raise Refusal(f"{path} has no rows; delete {run} and rerun the sweep")
    line, last = rows[-1]  # the model at the end of the fine-tune
    scores = {k: number(path, line, last, k) for k in ("accuracy", "macro_f1", "elapsed_s")}
    try:
        with open(os.path.join(run, "floor.json")) as f:
            floor = json.load(f)
        with open(os.path.join(run, "finetune.toml"), "rb") as f:
            fc = tomllib.load(f)["finetune"]
        recipe = (f"lr {fc['lr']:g}, {fc['epochs']} epochs of batch {fc['batch_size']}, "
                  f"{fc['warmup_steps']} warm-up steps")
        floors = {f"{key}_{score}": float(floor[name][score])
                  for key, name in (("bow", "bag_of_words"), ("majority", "majority_class"))
                  for score in ("accuracy", "macro_f1")}
        converged = floor["bag_of_words"].get("converged", True) is True  # older runs: no field
    except (OSError, ValueError, KeyError, TypeError, AttributeError, tomllib.TOMLDecodeError) as e:
        what = e.strerror if isinstance(e, OSError) else f"{type(e).__name__}: {e}"
        raise Refusal(f"{run}: floor.json or finetune.toml is missing or damaged ({what}); "
                      "delete the run and rerun the sweep") from None
    if not all(math.isfinite(v) for v in floors.values()):
        raise Refusal(f"{run}/floor.json holds a non-finite score; delete the run and rerun the sweep")
    return {"step": number(path, line, last, "step", int), "accuracy": scores["accuracy"],
            "macro_f1": scores["macro_f1"], "elapsed_s": scores["elapsed_s"], "recipe": recipe,
            "bow_accuracy": floors["bow_accuracy"], "bow_macro_f1": floors["bow_macro_f1"],
            "majority_accuracy": floors["majority_accuracy"],
            "majority_macro_f1": floors["majority_macro_f1"], "bow_converged": converged}


def collect(out):
    """One row per finished fine-tune under OUT/ft (a run without its done marker is left out:
    finetune_sweep.sh redoes it)."""
    if not out or not os.path.isdir(out):
        raise Refusal(f"OUT_DIR '{out}' is not a folder; run scripts/finetune_sweep.sh OUT_DIR first")
    ft = os.path.join(out, "ft")
    if not os.path.isdir(ft):
        raise Refusal(f"{ft} does not exist; run scripts/finetune_sweep.sh {out} first")
    rows = []
    for task in folders(ft):
        for scheme in folders(os.path.join(ft, task)):
            base = os.path.join(ft, task, scheme)
            for seed_dir in folders(base, (is_seed_log,)):
                run = os.path.join(base, seed_dir)
                if not is_seed(seed_dir):
                    raise Refusal(f"{run} is not a seed<k> folder; move it away")
                if os.path.isfile(os.path.join(run, "done")):
                    rows.append({"task": task, "scheme": scheme, "seed": int(seed_dir[4:]),
                                 **read_run(run)})
    if not rows:
        raise Refusal(f"no finished fine-tune under {ft}; run scripts/finetune_sweep.sh {out}")
    return rows


def main(argv):
    force = "--force" in argv[1:]
    args = [a for a in argv[1:] if a != "--force"]
    if len(args) not in (1, 2) or any(a.startswith("--") for a in args):
        print(f"finetune_table: {USAGE}", file=sys.stderr)
        return 2
    out, reference = args[0], (args[1] if len(args) == 2 else "rope_interleaved")
    outputs = [os.path.join(out, "finetune_results.csv"), os.path.join(out, "table.md")]
    try:
        rows = collect(out)
        schemes = sorted({r["scheme"] for r in rows})
        if len(args) == 2 and reference not in schemes:
            raise Refusal(f"REFERENCE '{reference}' is not a scheme of {out}/ft; pick one of: "
                          + ", ".join(schemes))
        for path in outputs:  # both checked before either is written
            check_text_replaceable(path, OWNER, force)
        results = io.StringIO(newline="")
        w = csv.DictWriter(results, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
        table = render(rows, reference)
        write_text(outputs[0], results.getvalue(), OWNER)
        write_text(outputs[1], table, OWNER)
    except Refusal as e:
        print(f"finetune_table: {e}", file=sys.stderr)
        return 2
    print(table)
    return 0


def render(rows, reference):
    """table.md's text."""
    lines = ["# Fine-tune table", "",
             f"Test scores at the end of each fine-tune; mean ± std over seeds. Δ macro-F1: the "
             f"paired difference against `{reference}` over the seeds both have, with its 95 % "
             f"interval (Student t). `scratch`: the same architecture and tokenizer, no "
             f"pre-training. Written by scripts/finetune_table.py.", ""]
    for task in sorted({r["task"] for r in rows}):
        mine = [r for r in rows if r["task"] == task]
        lines += [f"## {task}", "",
                  "| model | seeds | macro-F1 | accuracy | Δ macro-F1 vs " + reference + " [95 %] |",
                  "|---|---|---|---|---|"]
        by = {}
        for r in mine:
            by.setdefault(r["scheme"], {})[r["seed"]] = r
        order = ([reference] if reference in by else []) + \
            [s for s in sorted(by) if s not in (reference, "scratch")] + \
            (["scratch"] if "scratch" in by else [])
        for scheme in order:
            runs = by[scheme]
            f1 = mean_std([r["macro_f1"] for r in runs.values()])
            acc = mean_std([r["accuracy"] for r in runs.values()])
            delta = "—"
            if scheme != reference and reference in by:
                seeds = sorted(set(runs) & set(by[reference]))
                if seeds:
                    m, half = interval([runs[s]["macro_f1"] - by[reference][s]["macro_f1"]
                                        for s in seeds])
                    delta = (f"{m:+.4f} [{m - half:+.4f}, {m + half:+.4f}]" if half is not None
                             else f"{m:+.4f} (1 seed: no interval)")
            lines.append(f"| {scheme} | {len(runs)} | {pm(*f1)} | {pm(*acc)} | {delta} |")
        for name, key in [("bag of words", "bow"), ("majority class", "majority")]:
            f1 = mean_std([r[key + "_macro_f1"] for r in mine])
            acc = mean_std([r[key + "_accuracy"] for r in mine])
            lines.append(f"| {name} (floor) | {len(mine)} runs | {pm(*f1)} | {pm(*acc)} | — |")
        unconverged = sum(not r["bow_converged"] for r in mine)
        below = sum(r["bow_accuracy"] < r["majority_accuracy"] for r in mine)
        if unconverged or below:  # the floor is a floor only where it says what it is
            lines.append(f"| (bag of words: {unconverged} of {len(mine)} did not converge; "
                         f"{below} below the majority class) | | | | |")
        times = sorted(r["elapsed_s"] for r in mine)
        recipes = sorted({r["recipe"] for r in mine})
        lines += ["", f"{len(mine)} fine-tunes, {times[len(times) // 2]:.0f} s each "
                  f"(median wall time; {times[0]:.0f}–{times[-1]:.0f} s); "
                  + ("; ".join(recipes) if len(recipes) == 1 else "MIXED settings: " + " / ".join(recipes))
                  + " (each run's finetune.toml).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
