#!/usr/bin/env python3
"""The fine-tune table of a scripts/finetune_sweep.sh directory.

    scripts/finetune_table.py OUT_DIR [REFERENCE]      (REFERENCE: default rope_interleaved)

Reads OUT_DIR/ft/<task>/<scheme>/seed<k>/{metrics.csv, floor.json} (the last metrics row is
the model at the end of the fine-tune) and writes OUT_DIR/finetune_results.csv (one row per
task, scheme and seed) and OUT_DIR/table.md: per task, test macro-F1 and accuracy as mean ± std
over seeds for every scheme and for `scratch` (no pre-training), the paired difference in
macro-F1 against REFERENCE over the seeds both have, with its 95 % interval (Student t,
ν = seeds − 1; scripts/paired_diff.py's statistic), and the bag-of-words floor and the
majority class (means over the runs' floor.json files).
"""
import csv
import json
import math
import os
import sys
import tomllib

from paired_diff import interval


def mean_std(xs):
    m = sum(xs) / len(xs)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else float("nan")
    return m, s


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    out, reference = sys.argv[1], (sys.argv[2] if len(sys.argv) == 3 else "rope_interleaved")
    ft = os.path.join(out, "ft")
    if not os.path.isdir(ft):
        sys.exit(f"finetune_table: {ft} does not exist; run scripts/finetune_sweep.sh {out} first")
    rows = []
    for task in sorted(os.listdir(ft)):
        for scheme in sorted(os.listdir(os.path.join(ft, task))):
            base = os.path.join(ft, task, scheme)
            if not os.path.isdir(base):
                continue
            for seed_dir in sorted(os.listdir(base)):
                run = os.path.join(base, seed_dir)
                if not (seed_dir.startswith("seed") and os.path.isfile(os.path.join(run, "done"))):
                    continue
                with open(os.path.join(run, "metrics.csv"), newline="") as f:
                    last = list(csv.DictReader(f))[-1]
                with open(os.path.join(run, "floor.json")) as f:
                    floor = json.load(f)
                with open(os.path.join(run, "finetune.toml"), "rb") as f:
                    fc = tomllib.load(f)["finetune"]
                recipe = (f"lr {fc['lr']:g}, {fc['epochs']} epochs of batch {fc['batch_size']}, "
                          f"{fc['warmup_steps']} warm-up steps")
                rows.append({"task": task, "scheme": scheme, "seed": int(seed_dir[4:]),
                             "step": int(last["step"]), "accuracy": float(last["accuracy"]),
                             "macro_f1": float(last["macro_f1"]),
                             "elapsed_s": float(last["elapsed_s"]), "recipe": recipe,
                             "bow_accuracy": floor["bag_of_words"]["accuracy"],
                             "bow_macro_f1": floor["bag_of_words"]["macro_f1"],
                             "majority_accuracy": floor["majority_class"]["accuracy"],
                             "majority_macro_f1": floor["majority_class"]["macro_f1"]})
    if not rows:
        sys.exit(f"finetune_table: no finished fine-tune under {ft}")
    with open(os.path.join(out, "finetune_results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

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
                    delta = f"{m:+.4f} [{m - half:+.4f}, {m + half:+.4f}]"
            lines.append(f"| {scheme} | {len(runs)} | {f1[0]:.4f} ± {f1[1]:.4f} | "
                         f"{acc[0]:.4f} ± {acc[1]:.4f} | {delta} |")
        for name, key in [("bag of words", "bow"), ("majority class", "majority")]:
            f1 = mean_std([r[key + "_macro_f1"] for r in mine])
            acc = mean_std([r[key + "_accuracy"] for r in mine])
            lines.append(f"| {name} (floor) | {len(mine)} runs | {f1[0]:.4f} ± {f1[1]:.4f} | "
                         f"{acc[0]:.4f} ± {acc[1]:.4f} | — |")
        times = sorted(r["elapsed_s"] for r in mine)
        recipes = sorted({r["recipe"] for r in mine})
        lines += ["", f"{len(mine)} fine-tunes, {times[len(times) // 2]:.0f} s each "
                  f"(median wall time; {times[0]:.0f}–{times[-1]:.0f} s); "
                  + ("; ".join(recipes) if len(recipes) == 1 else "MIXED settings: " + " / ".join(recipes))
                  + " (each run's finetune.toml).", ""]
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
