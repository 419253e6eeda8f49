#!/usr/bin/env python3
"""Stage 8 — experiments: what bf16 does to RoPE's relative property (matplotlib, Agg).

    python3 scripts/plot_rope_precision.py PRECISION.csv [--out PICTURE.png]

PRECISION.csv is what `roformer rope-precision --out PRECISION.csv` wrote: for each pairing,
precision case and shift p of a window of q and k, the mean |s(p+i, p+j) − s(i, j)| — how far
a score moved when the whole window moved by p, which RoPE promises is 0 — and the mean |score|
(src/experiments/rope_precision.hpp; Wang et al. 2024, "When Precision Meets Position: BFloat16
Breaks Down RoPE in Long-Context Training", arXiv:2411.13476). The picture has one panel per
pairing (interleaved, half): the shift error over the mean |score| against p, log–log, one
line per case (p = 0, where nothing moves, is left out).

Legend: s(m, n) = ⟨R_m q, R_n k⟩, p the shift, i ≥ j the query and key tokens of the window.

The picture goes to --out (default: PRECISION.csv with .png). A file there that this script
did not draw (no Software text chunk SOFTWARE) is never replaced; the picture is written to a
temporary name first and renamed over the old one.
Exit codes: 0 written, 2 bad arguments / a damaged CSV / a foreign file in the way, 3
matplotlib missing.
"""
import os
import sys

from script_outputs import (Refusal, check_replaceable, csv_plot_args, number, plotting, read_csv,
                            save)

SOFTWARE = "roformer-cpp scripts/plot_rope_precision.py"  # the PNG's Software text chunk: ours
COLUMNS = ["vectors", "pairing", "case", "position", "shift_error", "reference_error",
           "first_token_error", "other_tokens_error", "score_scale", "first_token_scale"]
PAIRINGS = ["interleaved", "half"]
# The cases in the command's order, with the letter docs/results.md gives each.
CASES = {"f32": "(a) f32", "bf16_before_rotation": "(b) bf16 before rotation",
         "bf16_after_rotation": "(c) bf16 after rotation", "angle_f32": "(d) angle in f32",
         "angle_bf16": "(d′) angle in bf16", "bf16_rotation": "(e) all-bf16 rotation"}
FIX = "write it again with `roformer rope-precision --out FILE.csv`"


def load(path):
    """{pairing: {case: [(p, shift error / mean |score|)]}} and the vectors' source, every
    cell checked."""
    if os.path.lexists(path) and not os.path.isfile(path):  # a folder, a FIFO: never opened
        raise Refusal(f"{path} is not a regular file; {FIX}")
    rows = read_csv(path, COLUMNS, FIX)
    if not rows:
        raise Refusal(f"{path} has a header but no rows; {FIX}")
    curves = {pairing: {case: [] for case in CASES} for pairing in PAIRINGS}
    sources = set()
    for line, r in rows:
        pairing, case = r["pairing"], r["case"]
        if pairing not in curves or case not in CASES:
            raise Refusal(f"{path}:{line}: unknown pairing {pairing!r} or case {case!r}; {FIX}")
        position = number(path, line, r, "position", int)
        error = number(path, line, r, "shift_error")
        scale = number(path, line, r, "score_scale")
        if position < 0 or error < 0 or scale <= 0:
            raise Refusal(f"{path}:{line}: a negative position or error, or a mean |score| ≤ 0; "
                          f"{FIX}")
        sources.add(r["vectors"])
        if position > 0:
            curves[pairing][case].append((position, error / scale))
    if not any(points for by_case in curves.values() for points in by_case.values()):
        raise Refusal(f"{path} has no row with a shift p > 0 to draw; {FIX}")
    return curves, ", ".join(sorted(sources))


def draw(plt, path, curves, source):
    """Two panels (pairings), one line per case: relative shift error against p, log–log."""
    fig, axes = plt.subplots(1, 2, figsize=(12.0, 4.8), sharey=True)
    for ax, pairing in zip(axes, PAIRINGS):
        for case, label in CASES.items():
            points = sorted(curves[pairing][case])
            if not points:
                continue
            # an error of exactly 0 has no place on a log axis: drawn at the axis floor
            ax.plot([p for p, _ in points], [max(e, 1e-12) for _, e in points], marker=".",
                    label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{pairing} pairing", fontsize=10)
        ax.set_xlabel("shift p of the window (positions)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("mean |s(p+i, p+j) − s(i, j)| / mean |s|")
    legend = {}  # label → line, from whichever panel has it (a CSV may hold one pairing)
    for ax in axes:
        for line, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, line)
    axes[1].legend(list(legend.values()), list(legend), fontsize=8, loc="center left",
                   bbox_to_anchor=(0.0, 0.45))
    fig.suptitle(f"{os.path.basename(path)} ({source} q, k): how far RoPE's scores move when the "
                 "window moves — 0 in exact arithmetic", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def parse(argv):
    return csv_plot_args(
        argv,
        "Draw `roformer rope-precision --out FILE.csv`: RoPE's shift error by "
        "position, one line per precision case, one panel per pairing.",
        "rope-precision", "python3 scripts/plot_rope_precision.py runs/precision.csv", missing="matplotlib")


def main(argv):
    args = parse(argv)
    libs = plotting("plot_rope_precision")
    if libs is None:
        return 3
    _, _, plt = libs
    try:
        check_replaceable(args.out, SOFTWARE, "plot_rope_precision.py")
        curves, source = load(args.csv)
        save(draw(plt, args.csv, curves, source), args.out, plt, SOFTWARE)
        print(args.out)
    except Refusal as e:
        print(f"plot_rope_precision: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
