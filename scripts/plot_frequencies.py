#!/usr/bin/env python3
"""Stage 5 — model: the RoPE frequency-usage picture of a trained run (numpy + matplotlib, Agg).

    python3 scripts/plot_frequencies.py FREQUENCIES.csv [--out PICTURE.png]

FREQUENCIES.csv is what `roformer frequencies --run RUN --out FREQUENCIES.csv` wrote: per layer,
head and pair i, θ_i, mean |q_i|·|k_i| and its share of the head's sum, and the head's
most-attended relative offset (src/model/frequency_usage.hpp). The picture has one heat map per
layer: rows the heads, columns the pairs from the fastest (i = 0, θ = 1 rad per position) to
the slowest (the highest i), colour each pair's share; beside each head its top offset δ and
the mass on it, marked "local" when δ is −1, 0 or +1 — the positional heads of Barbero et al.
(ICLR 2025, arXiv:2410.06205), who found those built on the fastest pairs and the slowest pairs
used for meaning. Pairs that do not turn (θ = 0: p-RoPE's stopped pairs, the dims past
rotary_fraction) are hatched.

Legend: D head size, P = D/2 pairs, θ_i = base^(−2i/D), δ = n − m (key − query position).

The picture goes to --out (default: FREQUENCIES.csv with .png). A file there that this script
did not draw (no Software text chunk SOFTWARE) is never replaced; the picture is written to a
temporary name first and renamed over the old one.
Exit codes: 0 written, 2 bad arguments / a damaged CSV / a foreign file in the way, 3 numpy or
matplotlib missing.
"""
import os
import sys

from script_outputs import (Refusal, check_replaceable, csv_plot_args, number, plotting, read_csv,
                            save)

SOFTWARE = "roformer-cpp scripts/plot_frequencies.py"  # the PNG's Software text chunk: ours
COLUMNS = ["layer", "head", "pair", "theta", "mean_norm_product", "share", "top_offset",
           "top_offset_mass", "top_offset_local"]
FIX = "write it again with `roformer frequencies --run RUN --out FILE.csv`"


def load(np, path):
    """share[L, H, P], theta[P], offset[L, H], mass[L, H] and the layer numbers from the CSV;
    every cell checked. Only the layers that rotate have rows (a hybrid "none,rope" has layer 1
    alone), so the L layers are the numbers present, in order."""
    if os.path.lexists(path) and not os.path.isfile(path):  # a folder, a FIFO: never opened
        raise Refusal(f"{path} is not a regular file; {FIX}")
    rows = read_csv(path, COLUMNS, FIX)
    if not rows:
        raise Refusal(f"{path} has a header but no rows; {FIX}")
    cells = [(number(path, line, r, "layer", int), number(path, line, r, "head", int),
              number(path, line, r, "pair", int), number(path, line, r, "theta"),
              number(path, line, r, "share"), number(path, line, r, "top_offset", int),
              number(path, line, r, "top_offset_mass"), line) for line, r in rows]
    layers = sorted(set(c[0] for c in cells))
    index = {layer: i for i, layer in enumerate(layers)}
    cells = [(index[c[0]],) + c[1:] for c in cells]
    L = len(layers)
    H = max(c[1] for c in cells) + 1
    P = max(c[2] for c in cells) + 1
    if min(min(c[:3]) for c in cells) < 0 or len(cells) != L * H * P:
        raise Refusal(f"{path} has {len(cells)} rows, not one per (layer, head, pair) of "
                      f"{L} × {H} × {P}; {FIX}")
    share = np.full((L, H, P), np.nan)
    theta = np.zeros(P)
    offset = np.zeros((L, H), dtype=int)
    mass = np.zeros((L, H))
    for layer, head, pair, th, s, off, m, line in cells:
        if not np.isnan(share[layer, head, pair]):
            raise Refusal(f"{path}:{line} repeats layer {layers[layer]}, head {head}, pair {pair}; "
                          f"{FIX}")
        share[layer, head, pair] = s
        theta[pair] = th
        offset[layer, head], mass[layer, head] = off, m
    sums = share.sum(axis=2)
    if np.abs(sums - 1).max() > 1e-4:
        raise Refusal(f"{path}: the shares of a head sum to {sums.min():.4f} … {sums.max():.4f}, "
                      f"not 1; {FIX}")
    return share, theta, offset, mass, layers


def draw(np, plt, path, share, theta, offset, mass, layers):
    """One heat map per layer (heads × pairs), the top offset written beside each head."""
    L, H, P = share.shape
    fig, axes = plt.subplots(L, 1, figsize=(max(7.0, 0.32 * P + 4.0), 1.0 + (0.45 * H + 0.9) * L),
                             squeeze=False)
    vmax = float(share.max())
    for layer, ax in enumerate(axes[:, 0]):
        image = ax.imshow(share[layer], aspect="auto", cmap="viridis", vmin=0, vmax=vmax)
        for pair in np.nonzero(theta == 0)[0]:  # stopped pairs: hatched
            ax.add_patch(plt.Rectangle((pair - 0.5, -0.5), 1, H, fill=False, hatch="//",
                                       edgecolor="white", lw=0))
        ax.set_yticks(range(H))
        ax.set_yticklabels([f"head {h}" for h in range(H)], fontsize=8)
        ax.set_ylabel(f"layer {layers[layer]}", fontsize=9)
        for h in range(H):
            local = " local" if -1 <= offset[layer, h] <= 1 else ""
            ax.text(P - 0.3, h, f"  δ = {offset[layer, h]:+d}: {mass[layer, h]:.2f}{local}",
                    va="center", ha="left", fontsize=8)
        ticks = sorted(set([0, P // 4, P // 2, 3 * P // 4, P - 1]))
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{i}\nθ={theta[i]:.2g}" for i in ticks], fontsize=7)
        fig.colorbar(image, ax=ax, fraction=0.03, pad=0.16, label="share of Σ_i |q_i||k_i|")
    axes[-1, 0].set_xlabel("pair i: fast (left, θ = 1 rad per position) → slow (right)")
    name = os.path.basename(path)
    fig.suptitle(f"{name}: each pair's share of mean |q_i|·|k_i|, and each head's most-attended "
                 "offset δ = n − m with its mass", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig


def parse(argv):
    return csv_plot_args(
        argv,
        "Draw the frequency-usage heat maps of `roformer frequencies --out FILE.csv`.",
        "frequencies", "python3 scripts/plot_frequencies.py runs/classroom-freq.csv", missing="numpy/matplotlib")


def main(argv):
    args = parse(argv)
    libs = plotting("plot_frequencies", numpy=True)
    if libs is None:
        return 3
    np, _, plt = libs
    try:
        check_replaceable(args.out, SOFTWARE, "plot_frequencies.py")
        share, theta, offset, mass, layers = load(np, args.csv)
        save(draw(np, plt, args.csv, share, theta, offset, mass, layers), args.out, plt, SOFTWARE)
        print(args.out)
    except Refusal as e:
        print(f"plot_frequencies: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
