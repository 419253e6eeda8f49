#!/usr/bin/env python3
"""Paired differences against a reference run name, from a comparison's CSV files.

    scripts/paired_diff.py DIR REFERENCE

For every other scheme of DIR (a `roformer compare` --out): the final validation loss
(curves.csv, last step) and, if DIR/extrapolation.csv exists, the plain-method loss at each
length, each as the mean over seeds of (scheme − REFERENCE) with its 95 % interval
(Student t, ν = seeds − 1). The C++ summary pairs every scheme with `learned`; this is the
same statistic against any name (compare_stats.cpp has the reference implementation).
"""
import csv
import math
import sys
from collections import defaultdict

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval(diffs):
    n = len(diffs)
    mean = sum(diffs) / n
    if n < 2:
        return mean, float("nan")
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    return mean, T975.get(n - 1, 1.96) * sd / math.sqrt(n)


def report(label, values, reference):
    for scheme in sorted(values):
        if scheme == reference:
            continue
        seeds = sorted(set(values[scheme]) & set(values[reference]))
        diffs = [values[scheme][s] - values[reference][s] for s in seeds]
        mean, half = interval(diffs)
        print(f"{label:>14} {scheme:>20} − {reference}: {mean:+.4f} [{mean - half:+.4f}, "
              f"{mean + half:+.4f}] over {len(seeds)} seeds")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, reference = sys.argv[1], sys.argv[2]
    final = defaultdict(dict)
    last_step = defaultdict(int)
    with open(f"{root}/curves.csv", newline="") as f:
        for row in csv.DictReader(f):
            key = (row["scheme"], int(row["seed"]))
            step = int(row["step"])
            if step >= last_step[key]:
                last_step[key] = step
                final[row["scheme"]][int(row["seed"])] = float(row["val_loss"])
    report("final loss", final, reference)
    try:
        with open(f"{root}/extrapolation.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["method"] == "plain" and r["loss"]]
    except FileNotFoundError:
        return
    for length in sorted({int(r["length"]) for r in rows}):
        at = defaultdict(dict)
        for r in rows:
            if int(r["length"]) == length:
                at[r["scheme"]][int(r["seed"])] = float(r["loss"])
        report(f"length {length}", at, reference)


if __name__ == "__main__":
    main()
