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
(no SOFTWARE text chunk) is never replaced.
Exit codes: 0 written, 2 bad arguments, a damaged CSV or someone else's OUT.png, 3 matplotlib
missing.
"""
import csv
import os
import sys

HEADER = "true\\predicted"
SOFTWARE = "roformer-cpp scripts/plot_confusion.py"  # the PNG's Software text chunk: ours


def check_replaceable(out):
    """Refuses to draw over a file this script did not write (the rule of src/io/output_file.hpp)."""
    if not os.path.exists(out):
        return
    with open(out, "rb") as f:
        if SOFTWARE.encode() in f.read(64 << 20):
            return
    raise ValueError(f"{out} exists and was not drawn by plot_confusion.py; move it away or "
                     "pick another OUT.png")


def read_matrix(path):
    """The labels and the counts [true][predicted] of a `classify --confusion` CSV."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0][0] != HEADER:
        raise ValueError(f"{path} is not a `roformer classify --confusion` CSV")
    labels = rows[0][1:]
    counts = []
    for row in rows[1:]:
        if len(row) != len(labels) + 1:
            raise ValueError(f"{path}: row '{row[0]}' has {len(row) - 1} counts, not {len(labels)}")
        counts.append([int(x) for x in row[1:]])
    if [r[0] for r in rows[1:]] != labels:
        raise ValueError(f"{path}: the rows' labels are not the columns' labels")
    return labels, counts


def draw(labels, counts, out, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    temporary = f"{out}.tmp-{os.getpid()}.png"
    try:
        fig.savefig(temporary, dpi=120, metadata={"Software": SOFTWARE})
        os.replace(temporary, out)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        labels, counts = read_matrix(argv[1])
        check_replaceable(argv[2])
    except (OSError, ValueError) as e:
        print(f"plot_confusion: {e}", file=sys.stderr)
        return 2
    try:
        draw(labels, counts, argv[2], argv[3] if len(argv) == 4 else "")
    except ImportError:
        print("plot_confusion: matplotlib is missing (apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 3
    print(f"plot_confusion: {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
