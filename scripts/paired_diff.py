#!/usr/bin/env python3
"""Paired differences against a reference run name, from a comparison's CSV files.

    scripts/paired_diff.py DIR REFERENCE

For every other scheme of DIR (a `roformer compare` --out): the final validation loss
(curves.csv, last step) and, if DIR/extrapolation.csv exists, the plain-method loss at each
length, each as the mean over seeds of (scheme − REFERENCE) with its 95 % interval
(Student t, ν = seeds − 1). The C++ summary pairs every scheme with `learned`; this is the
same statistic against any name (compare_stats.cpp has the reference implementation).
"""
import math
import os
import sys
from collections import defaultdict

from script_outputs import Refusal, number, read_csv  # one line for a bad input, exit 2

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
USAGE = "usage: scripts/paired_diff.py DIR REFERENCE (DIR: a `roformer compare --out`)"
FIX = "is DIR a `roformer compare --out` directory? rerun compare / extrapolate to rewrite it"


def interval(diffs):
    """(mean, half-width of the 95 % interval) of DIFFS (at least one); the half-width is None
    for a single difference: one seed gives no interval."""
    n = len(diffs)
    mean = sum(diffs) / n
    if n < 2:
        return mean, None
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    return mean, T975.get(n - 1, 1.96) * sd / math.sqrt(n)


def describe(diffs):
    """'+m [lo, hi] over n seeds', or the mean alone with the reason there is no interval."""
    mean, half = interval(diffs)
    if half is None:
        return f"{mean:+.4f} over 1 seed (no interval from one seed)"
    return f"{mean:+.4f} [{mean - half:+.4f}, {mean + half:+.4f}] over {len(diffs)} seeds"


def report(label, values, reference, schemes):
    for scheme in sorted(schemes):
        if scheme == reference:
            continue
        mine, theirs = values.get(scheme, {}), values.get(reference, {})
        seeds = sorted(set(mine) & set(theirs))
        if not seeds:  # e.g. learned cannot run past its max_positions: no pair to take
            why = (f"{reference} has no loss here" if not theirs else
                   f"{scheme} has no loss here" if not mine else "no seed has both")
            print(f"{label:>14} {scheme:>20} − {reference}: — (no pair: {why})")
            continue
        print(f"{label:>14} {scheme:>20} − {reference}: "
              + describe([values[scheme][s] - values[reference][s] for s in seeds]))


def final_losses(root):
    """scheme -> seed -> validation loss at the last step of curves.csv."""
    path = os.path.join(root, "curves.csv")
    final, last_step = defaultdict(dict), {}
    for line, row in read_csv(path, ["scheme", "seed", "step", "val_loss"], FIX):
        key = (row["scheme"], number(path, line, row, "seed", int))
        step = number(path, line, row, "step", int)
        loss = number(path, line, row, "val_loss")
        if step >= last_step.get(key, step):
            last_step[key] = step
            final[key[0]][key[1]] = loss
    if not final:
        raise Refusal(f"{path} has no rows; {FIX}")
    return final


def plain_losses(path):
    """length -> scheme -> seed -> plain-method loss (an empty loss: that length cannot run)."""
    by_length = defaultdict(lambda: defaultdict(dict))
    for line, row in read_csv(path, ["scheme", "seed", "length", "method", "loss"], FIX):
        length = number(path, line, row, "length", int)
        loss = number(path, line, row, "loss", empty=True)
        if row["method"] == "plain" and loss is not None:
            by_length[length][row["scheme"]][number(path, line, row, "seed", int)] = loss
    return by_length


def main(argv):
    if len(argv) != 3:
        print(USAGE, file=sys.stderr)
        return 2
    root, reference = argv[1], argv[2]
    try:
        if not root or not os.path.isdir(root):
            raise Refusal(f"DIR '{root}' is not a folder; pass a `roformer compare --out` directory")
        final = final_losses(root)
        if reference not in final:
            raise Refusal(f"REFERENCE '{reference}' is not a scheme of {root}/curves.csv; pick "
                          f"one of: {', '.join(sorted(final))}")
        extrapolation = os.path.join(root, "extrapolation.csv")
        by_length = plain_losses(extrapolation) if os.path.lexists(extrapolation) else {}
    except Refusal as e:
        print(f"paired_diff: {e}", file=sys.stderr)
        return 2
    report("final loss", final, reference, final)
    for length in sorted(by_length):
        report(f"length {length}", by_length[length], reference, final)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
