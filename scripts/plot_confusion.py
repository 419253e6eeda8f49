#!/usr/bin/env python3
"""Stage 9 — finetune: draw a fine-tuned run's confusion matrix (matplotlib, Agg).

    build/roformer classify --run RUN --test-split --confusion RUN/confusion.csv
    python3 scripts/plot_confusion.py RUN/confusion.csv OUT.png [TITLE]

Each row is one true label, normalised to 1: cell (t, p) is the share of the test examples
of class t that the model called p, so the diagonal is each class's recall. A class with no
test example (a short book without a held-out chapter) is a grey row. Up to 12 classes
every cell also prints its count; with more (kjv-book's 66 books) the picture is a heat map
with the labels along both axes. The picture is written to a temporary name first and renamed
over OUT.png, so a failed draw leaves the old one in place; an OUT.png this script did not draw
(no SOFTWARE text chunk) is never replaced (scripts/script_outputs.py, the scripts' one rule).
Exit codes: 0 written, 2 bad arguments, a damaged or empty CSV (a blank line, an empty or
negative cell, no example counted), a missing output folder or someone else's OUT.png — each
one line naming it; 3 matplotlib missing.
"""
import csv
import sys

from script_outputs import Refusal, check_replaceable, number, plotting, read_csv, save  # one rule

HEADER = "true\\predicted"
SOFTWARE = "roformer-cpp scripts/plot_confusion.py"  # the PNG's Software text chunk: ours
FIX = "write it again with `roformer classify --run RUN --test-split --confusion FILE.csv`"


def read_matrix(path):
    """The labels and the counts [true][predicted] of a `classify --confusion` CSV."""
    if not path:
        raise Refusal("the CSV path is empty; name a `roformer classify --confusion` CSV")
    rows = read_csv(path, [HEADER], FIX)
    with open(path, newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    labels = header[1:]
    if header[0] != HEADER or not labels or len(set(labels)) != len(labels):
        raise Refusal(f"{path}'s first line is not '{HEADER},<each class once>'; {FIX}")
    counts = []
    for line, row in rows:
        counts.append([number(path, line, row, label, int) for label in labels])
        if min(counts[-1]) < 0:
            raise Refusal(f"{path}:{line}: a negative count; {FIX}")
    if [row[HEADER] for _, row in rows] != labels:
        raise Refusal(f"{path}: the rows' labels are not the columns' labels; {FIX}")
    if not sum(map(sum, counts)):
        raise Refusal(f"{path} counts no test example (every cell is 0); nothing to draw: "
                      "score a run whose test split is not empty")
    return labels, counts


def draw(labels, counts, out, title, matplotlib, plt):
    k = len(labels)
    # A class without test examples has no row to normalise: drawn grey (NaN), not as zeros.
    shares = [[c / sum(row) if sum(row) else float("nan") for c in row] for row in counts]
    size = 4.5 if k <= 12 else 11
    fig, ax = plt.subplots(figsize=(size + 1, size))
    cmap = matplotlib.colormaps["Blues"].copy()
    cmap.set_bad("#d9d9d9")
    image = ax.imshow(shares, cmap=cmap, vmin=0, vmax=1)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="share of the true class")
    font = 9 if k <= 12 else 5
    ax.set_xticks(range(k))
    ax.set_yticks(range(k))
    if k <= 12:
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=font)
    else:
        ax.set_xticklabels(labels, rotation=90, fontsize=font)
    ax.set_yticklabels(labels, fontsize=font)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    if k <= 12:
        for t in range(k):
            for p in range(k):
                colour = "white" if sum(counts[t]) and shares[t][p] > 0.5 else "black"
                ax.text(p, t, str(counts[t][p]), ha="center", va="center", color=colour, fontsize=8)
    n = sum(map(sum, counts))
    correct = sum(counts[i][i] for i in range(k))
    empty = sum(1 for row in counts if not sum(row))
    note = f"{n} test examples, accuracy {correct / n:.4f}" + (
        f"; {empty} grey rows: classes with no test example" if empty else "")
    ax.set_title(f"{title}\n{note}" if title else note, fontsize=10)
    fig.tight_layout()
    save(fig, out, plt, SOFTWARE, dpi=120)


def main(argv):
    options = [a for a in argv[1:] if a.startswith("--")]
    if options or len(argv) not in (3, 4):
        print("plot_confusion: " + (f"unknown option {options[0]}; " if options else "")
              + "usage: scripts/plot_confusion.py FILE.csv OUT.png [TITLE]", file=sys.stderr)
        return 2
    try:
        labels, counts = read_matrix(argv[1])
        check_replaceable(argv[2], SOFTWARE, "plot_confusion.py")
    except Refusal as e:
        print(f"plot_confusion: {e}", file=sys.stderr)
        return 2
    libs = plotting("plot_confusion")
    if libs is None:
        return 3
    _, matplotlib, plt = libs
    try:
        draw(labels, counts, argv[2], argv[3] if len(argv) == 4 else "", matplotlib, plt)
    except Refusal as e:
        print(f"plot_confusion: {e}", file=sys.stderr)
        return 2
    print(f"plot_confusion: {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
