#!/usr/bin/env python3
"""Stage 9 — compare: draw the comparison's plots from its CSV files (matplotlib, Agg).

    python3 scripts/plot_curves.py DIR [curves|extrapolation|all] [OUT.png]

  curves         DIR/curves.csv        -> DIR/curves.png
                 validation loss vs step: per scheme the mean over seeds (line) and the
                 min-max band; right panel: the same, zoomed on the last 40 % of the steps.
  extrapolation  DIR/extrapolation.csv -> DIR/extrapolation.png
                 validation loss vs window length (k*L): per scheme and method the mean over
                 seeds with min-max error bars; lengths a model cannot run at are left out.
OUT.png (with one of curves / extrapolation): write the picture there instead; roformer passes
a temporary name and renames it over DIR/<name>.png itself (src/io/output_file.hpp), after
checking that the file it replaces is one of these plots (PNG text chunk Software = SOFTWARE).
Exit codes: 0 written; 2 bad arguments, a DIR that is not a folder or has neither CSV, a damaged
CSV (a blank line, an empty or non-finite loss), a missing output folder or a file this script
did not draw at the output path — each one line naming it; 3 matplotlib missing. Pictures are
written by rename and replace only this script's own (scripts/script_outputs.py).
`roformer compare` / `roformer extrapolate` call this; the C++ never draws images itself.
"""
import os
import sys
from collections import defaultdict

from script_outputs import Refusal, check_replaceable, number, plotting, read_csv, save  # one rule

ORDER = ["rope_interleaved", "rope_half", "sinusoidal", "learned", "none", "alibi"]
COLORS = {
    "rope_interleaved": "#1f77b4",
    "rope_half": "#17becf",
    "sinusoidal": "#2ca02c",
    "learned": "#d62728",
    "none": "#7f7f7f",
    "alibi": "#9467bd",
}
SOFTWARE = "roformer-cpp scripts/plot_curves.py"
STYLES = {"plain": "-", "interpolation": "--", "ntk": ":"}


def scheme_order(names):
    return sorted(names, key=lambda s: (ORDER.index(s) if s in ORDER else len(ORDER), s))


FIX = "is DIR a `roformer compare --out` directory? rerun compare / extrapolate to rewrite it"


def read_curves(directory):
    """scheme -> step -> [val_loss per seed], from DIR/curves.csv."""
    path = os.path.join(directory, "curves.csv")
    losses = defaultdict(lambda: defaultdict(list))
    for line, r in read_csv(path, ["scheme", "step", "val_loss"], FIX):
        losses[r["scheme"]][number(path, line, r, "step", int)].append(
            number(path, line, r, "val_loss"))
    if not losses:
        raise Refusal(f"{path} has no rows; {FIX}")
    return losses


def read_extrapolation(directory):
    """((scheme, method) -> length -> [loss per seed], every length), from extrapolation.csv;
    an empty loss is a length the model cannot run at."""
    path = os.path.join(directory, "extrapolation.csv")
    losses = defaultdict(lambda: defaultdict(list))
    lengths = set()
    for line, r in read_csv(path, ["scheme", "length", "method", "loss"], FIX):
        length = number(path, line, r, "length", int)
        lengths.add(length)
        loss = number(path, line, r, "loss", empty=True)
        if loss is not None:
            losses[(r["scheme"], r["method"])][length].append(loss)
    if not losses:
        raise Refusal(f"{path} has no evaluated rows; {FIX}")
    return losses, lengths


def plot_curves(losses, out, plt):
    last_step = max(max(by_step) for by_step in losses.values())
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    zoom_from = 0.6 * last_step
    zoom_low, zoom_high = float("inf"), float("-inf")
    for scheme in scheme_order(losses):
        steps = sorted(losses[scheme])
        mean = [sum(losses[scheme][s]) / len(losses[scheme][s]) for s in steps]
        low = [min(losses[scheme][s]) for s in steps]
        high = [max(losses[scheme][s]) for s in steps]
        seeds = max(len(losses[scheme][s]) for s in steps)
        color = COLORS.get(scheme)
        for ax in axes:
            (line,) = ax.plot(steps, mean, color=color, label=f"{scheme} ({seeds} seeds)",
                              linewidth=1.6)
            # a variant without a fixed colour: its band takes the colour its line was given
            ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        late = [(lo, hi) for s, lo, hi in zip(steps, low, high) if s >= zoom_from]
        if scheme != "none" and late:
            zoom_low = min(zoom_low, min(lo for lo, _ in late))
            zoom_high = max(zoom_high, max(hi for _, hi in late))
    axes[0].set_title("validation loss (mean over seeds, band = min–max)")
    axes[1].set_title(f"zoom: steps ≥ {zoom_from:.0f} (position schemes)")
    axes[1].set_xlim(zoom_from, last_step)
    if zoom_low < zoom_high:
        pad = 0.15 * (zoom_high - zoom_low) + 1e-3
        axes[1].set_ylim(zoom_low - pad, zoom_high + pad)
    for ax in axes:
        ax.set_xlabel("step")
        ax.set_ylabel("validation loss (nats)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    save(fig, out, plt, SOFTWARE, dpi=120)
    print(f"wrote {out}")


def plot_extrapolation(data, out, plt):
    losses, lengths = data
    fig, ax = plt.subplots(figsize=(8, 5))
    def rank(key):
        scheme, method = key
        return (ORDER.index(scheme) if scheme in ORDER else len(ORDER), scheme,
                list(STYLES).index(method) if method in STYLES else len(STYLES))

    keys = sorted(losses, key=rank)
    for scheme, method in keys:
        by_length = losses[(scheme, method)]
        xs = sorted(by_length)
        mean = [sum(by_length[x]) / len(by_length[x]) for x in xs]
        err = [[m - min(by_length[x]) for m, x in zip(mean, xs)], [max(by_length[x]) - m for m, x in zip(mean, xs)]]
        label = scheme if method == "plain" else f"{scheme} + {method}"
        ax.errorbar(xs, mean, yerr=err, color=COLORS.get(scheme), linestyle=STYLES.get(method, "-"),
                    marker="o", markersize=4, capsize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(lengths))
    ax.set_xticklabels([str(x) for x in sorted(lengths)])
    ax.set_xlabel("window length (tokens); the first is the training length")
    ax.set_ylabel("validation loss (nats)")
    ax.set_title("length extrapolation (mean over seeds, bars = min–max)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    save(fig, out, plt, SOFTWARE, dpi=120)
    print(f"wrote {out}")


USAGE = "usage: scripts/plot_curves.py DIR [curves|extrapolation|all] [OUT.png] (see its header)"
JOBS = {"curves": (read_curves, plot_curves), "extrapolation": (read_extrapolation, plot_extrapolation)}


def plan(argv):
    """[(name, data, output path)] for the pictures asked for: every input read and every
    output checked before anything is drawn."""
    directory = argv[1]
    what = argv[2] if len(argv) >= 3 else "all"
    if not directory or not os.path.isdir(directory):
        raise Refusal(f"DIR '{directory}' is not a folder; pass a `roformer compare --out` directory")
    names = [n for n in JOBS if what in (n, "all")
             and (what != "all" or os.path.lexists(os.path.join(directory, f"{n}.csv")))]
    if not names:
        raise Refusal(f"{directory} has neither curves.csv nor extrapolation.csv; {FIX}")
    jobs = []
    for name in names:
        out = argv[3] if len(argv) == 4 else os.path.join(directory, f"{name}.png")
        check_replaceable(out, SOFTWARE, "plot_curves.py")
        jobs.append((name, JOBS[name][0](directory), out))
    return jobs


def main(argv):
    if len(argv) < 2 or len(argv) > 4 or (len(argv) >= 3 and argv[2] not in ("curves", "extrapolation", "all")) \
            or (len(argv) == 4 and argv[2] == "all"):
        print(f"plot_curves: {USAGE}", file=sys.stderr)
        return 2
    try:
        jobs = plan(argv)
    except Refusal as e:
        print(f"plot_curves: {e}", file=sys.stderr)
        return 2
    libs = plotting("plot_curves")
    if libs is None:
        return 3
    plt = libs[2]
    try:
        for name, data, out in jobs:
            JOBS[name][1](data, out, plt)
    except Refusal as e:
        print(f"plot_curves: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
