#!/usr/bin/env python3
"""Stage 4 — position: RoPE's pictures for docs/rope-in-one-page.md (numpy + matplotlib, Agg).

    python3 scripts/plot_rope.py [--out DIR] [--run RUN] [--figures turn,clocks,scores,decay]

  turn    rope_turn.png    one pair of q and k, turned by m·θ and n·θ, then both moved by the
                           same offset: the angle between them, hence the score, is kept.
  clocks  rope_clocks.png  one clock per pair of a head (D = 32, base 10000, as
                           configs/classroom.toml): the hand at positions 0 … 15, the
                           wavelength 2π/θ_i under each clock.
  scores  rope_scores.png  the formula's score ⟨R_m q, R_n k⟩ for one q, k at every (m, n),
                           beside a trained head's attention (`roformer attention --run RUN`).
  decay   rope_decay.png   the paper's long-range decay bound (`roformer rope-decay`), checked
                           against the same sum computed here in numpy.

Legend: D head size, r = D rotary dims, pair i = dims (2i, 2i+1) (interleaved),
θ_i = base^(−2i/D), R_m the rotation of every pair i by m·θ_i (docs/rope.md §2–§5;
src/position/rope.cpp builds θ_i and turns the pairs).

Files go to DIR (default docs/img) as rope_<figure>.png. A file there that this script did
not draw (no Software text chunk SOFTWARE) is never replaced; each picture is written to a
temporary name first and renamed over the old one.
Exit codes: 0 written, 2 bad arguments / a failed roformer command / a foreign file in the
way, 3 numpy or matplotlib missing.
"""
import argparse
import csv
import io
import math
import os
import subprocess
import sys

from script_outputs import Refusal, check_replaceable, plotting, save  # the pictures' one rule

SOFTWARE = "roformer-cpp scripts/plot_rope.py"  # the PNG's Software text chunk: ours
FIGURES = ["turn", "clocks", "scores", "decay"]
# The classroom head (configs/classroom.toml: hidden 128 / 4 heads) and RoPE's default base.
HEAD_SIZE = 32
BASE = 10000.0
# A verse the classroom model has read (Genesis 1:1–2, data/kjv.txt) and the head whose
# diagonal bands show best in the classroom run (layer 0, head 1: see --layer/--head).
TEXT = ("In the beginning God created the heaven and the earth. And the earth was without "
        "form, and void; and darkness was upon the face of the deep.")
DEFAULT_LAYER, DEFAULT_HEAD = 0, 1


# ---- the formula ----------------------------------------------------------------------------
def frequencies(np, dim, base):
    """θ_i = base^(−2i/dim), i = 0 … dim/2 − 1 (rope_frequencies in src/position/rope.cpp)."""
    return base ** (-2.0 * np.arange(dim // 2) / dim)


def rotate(np, x, position, theta):
    """R_m x for x:[D] with interleaved pairs (2i, 2i+1), as the kernel's loop:
    y_lo = cos·x_lo − sin·x_hi,  y_hi = sin·x_lo + cos·x_hi,  angle = m·θ_i."""
    c, s = np.cos(position * theta), np.sin(position * theta)
    lo, hi = x[0::2], x[1::2]
    y = np.empty_like(x)
    y[0::2] = c * lo - s * hi
    y[1::2] = s * lo + c * hi
    return y


def decay_bound(np, dim, base, distances):
    """bound(Δ) = (1/(d/2)) Σ_{j=1}^{d/2} |S_j|, S_j = Σ_{i<j} e^{jΔθ_i} (docs/rope.md §9)."""
    theta = frequencies(np, dim, base)
    phases = np.exp(1j * np.outer(distances, theta))  # [distances, d/2]
    return np.abs(np.cumsum(phases, axis=1)).mean(axis=1)


# ---- the pictures -------------------------------------------------------------------------
def draw_turn(np, plt, args):
    """rope_turn.png: one 2-D pair of q and k at positions m, n, then m + s, n + s."""
    from matplotlib.patches import Arc

    theta = frequencies(np, args.dim, args.base)
    pair = 2  # θ_2 = 10000^(−4/32) ≈ 0.32 rad per position: turns visibly in a few steps
    th = theta[pair]
    q, k = np.array([1.0, 0.25]), np.array([0.55, 0.75])
    m, n, shift = 2, 5, 6
    panels = [("m = n = 0: not turned", 0, 0),
              (f"q at m = {m}, k at n = {n}", m, n),
              (f"both moved by {shift}: m = {m + shift}, n = {n + shift}", m + shift, n + shift)]
    fig, axes = plt.subplots(1, 3, figsize=(11.5, 4.1))
    for ax, (title, pm, pn) in zip(axes, panels):
        rq, rk = rotate(np, q, pm, np.array([th])), rotate(np, k, pn, np.array([th]))
        score = float(rq @ rk)
        gap = math.degrees(math.atan2(rk[1], rk[0]) - math.atan2(rq[1], rq[0]))
        gap = (gap + 180.0) % 360.0 - 180.0
        ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, color="#cccccc"))
        start = math.degrees(math.atan2(rq[1], rq[0]))  # the angle from q to k, as an arc
        low, high = (start, start + gap) if gap >= 0 else (start + gap, start)
        ax.add_patch(Arc((0, 0), 0.6, 0.6, theta1=low, theta2=high, color="#555555", lw=1.2))
        for v, name, colour in ((rq, f"R_{pm} q", "#1f77b4"), (rk, f"R_{pn} k", "#d62728")):
            ax.annotate("", xy=v, xytext=(0, 0),
                        arrowprops=dict(arrowstyle="-|>", color=colour, lw=2))
            ax.text(*(v * 1.18), name, color=colour, ha="center", va="center", fontsize=10)
        ax.set_title(f"{title}\nangle k − q = {gap:+.1f}°, score ⟨R_m q, R_n k⟩ = {score:.4f}",
                     fontsize=9.5)
        ax.set_xlim(-1.35, 1.35)
        ax.set_ylim(-1.35, 1.35)
        ax.set_aspect("equal")
        ax.axhline(0, color="#eeeeee", zorder=0)
        ax.axvline(0, color="#eeeeee", zorder=0)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"one pair (i = {pair} of a D = {args.dim} head: θ_{pair} = {th:.4f} rad per "
                 f"position) — moving both by the same offset keeps the angle and the score",
                 fontsize=10.5)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return fig


def draw_clocks(np, plt, args):
    """rope_clocks.png: one clock per pair, the hand at m = 0 … 15 and at m = 63."""
    theta = frequencies(np, args.dim, args.base)
    pairs = len(theta)
    cols = 8
    rows = math.ceil(pairs / cols)
    positions = np.arange(16)
    last = 63  # the last position of a classroom window (data.seq_len = 64)
    colours = plt.get_cmap("viridis")(positions / positions[-1])
    fig, axes = plt.subplots(rows, cols, figsize=(1.55 * cols, 2.1 * rows + 0.8))
    for i, ax in enumerate(np.ravel(axes)):
        ax.set_axis_off()
        if i >= pairs:
            continue
        ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, color="#999999", lw=0.8))
        for m, colour in zip(positions, colours):
            a = m * theta[i]
            ax.plot([0, math.cos(a)], [0, math.sin(a)], color=colour, lw=1.3)
        a = last * theta[i]
        ax.plot([0, math.cos(a)], [0, math.sin(a)], color="#d62728", lw=1.0, ls="--")
        ax.set_xlim(-1.15, 1.15)
        ax.set_ylim(-1.15, 1.15)
        ax.set_aspect("equal")
        wavelength = 2 * math.pi / theta[i]
        ax.set_title(f"pair {i}", fontsize=9)
        ax.text(0, -1.4, f"2π/θ = {wavelength:,.0f}" if wavelength >= 10 else
                f"2π/θ = {wavelength:.2f}", ha="center", va="center", fontsize=8)
    fig.suptitle(f"the hand of each pair at positions 0 … 15 (dark → light) and {last} (red, "
                 f"dashed): D = {args.dim}, base {args.base:g}, θ_i = base^(−2i/D)\n"
                 "fast pairs spin (position nearby), slow pairs barely move (content); "
                 "wavelength 2π/θ_i in positions", fontsize=10)
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.06, top=0.8, hspace=0.55, wspace=0.08)
    return fig


def run_roformer(args, command):
    """stdout of `roformer COMMAND…`; a failure is one line naming the command."""
    try:
        done = subprocess.run([args.roformer] + command, capture_output=True, text=True)
    except OSError as e:
        raise Refusal(f"cannot run {args.roformer} ({e.strerror}); build it (cmake --build build "
                      "--target roformer) or pass --roformer PATH")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise Refusal(f"{args.roformer} {command[0]} failed (exit {done.returncode}): {last}")
    return done.stdout


def trained_attention(np, args, scratch):
    """(tokens, p[T, T]) of one head of RUN, from `roformer attention --out FILE.csv`."""
    out = os.path.join(scratch, f"attention-{os.getpid()}.csv")
    try:
        run_roformer(args, ["attention", "--run", args.run, args.text, "--layer",
                            str(args.layer), "--head", str(args.head), "--out", out])
        with open(out, newline="") as f:
            rows = list(csv.reader(f))[1:]
    finally:
        if os.path.exists(out):
            os.remove(out)
    return [r[3] for r in rows], np.array([[float(v) for v in r[4:]] for r in rows])


def draw_scores(np, plt, args):
    """rope_scores.png: the formula's Toeplitz score matrix beside a trained head."""
    if not args.run:
        raise Refusal("the scores figure needs a trained run: pass --run RUN (e.g. runs/classroom"
                      " from configs/classroom.toml), or leave it out with --figures")
    tokens, attention = trained_attention(np, args, args.out)
    T = len(tokens)
    theta = frequencies(np, args.dim, args.base)
    # A key that is the query turned back by one position, k = R_{−1} q: then
    # ⟨R_m q, R_n k⟩ = ⟨R_m q, R_{n−1} q⟩ is largest where n − 1 = m, one step right of the
    # diagonal: "attend to the next token", the band a trained head shows beside it.
    rng = np.random.default_rng(0)
    q = rng.standard_normal(args.dim)
    k = rotate(np, q, -1, theta)
    scores = np.array([[rotate(np, q, m, theta) @ rotate(np, k, n, theta) for n in range(T)]
                       for m in range(T)])
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.4), gridspec_kw={"width_ratios": [1, 0.8, 1]})
    image = axes[0].imshow(scores, cmap="viridis")
    fig.colorbar(image, ax=axes[0], fraction=0.046, pad=0.04)
    axes[0].set_title(f"the formula: ⟨R_m q, R_n k⟩, random q (D = {args.dim}), k = R_−1 q\n"
                      "constant along every diagonal m − n", fontsize=10)
    axes[0].set_xlabel("key position n")
    axes[0].set_ylabel("query position m")
    offsets = np.arange(-(T - 1), T)
    row = np.array([q @ rotate(np, k, d, theta) for d in offsets])  # m = 0, n = d: any m alike
    axes[1].plot(offsets, row, color="#1f77b4", lw=1.4)
    axes[1].axvline(1, color="#d62728", ls="--", lw=1)
    axes[1].set_title("one value per diagonal: score against n − m\n"
                      "peak at n − m = +1 (dashed), ripples from the fast pairs", fontsize=10)
    axes[1].set_xlabel("n − m")
    axes[1].set_ylabel("score")
    axes[1].grid(alpha=0.3)
    image = axes[2].imshow(attention, cmap="magma", vmin=0)
    fig.colorbar(image, ax=axes[2], fraction=0.046, pad=0.04)
    run_name = os.path.basename(os.path.normpath(args.run))
    axes[2].set_title(f"trained: {run_name}, layer {args.layer}, head {args.head} — softmax "
                      "attention p_mn\n(`roformer attention`): a band on n = m + 1",
                      fontsize=10)
    labels = [t.replace("▁", "_") for t in tokens]
    axes[2].set_xticks(range(T))
    axes[2].set_xticklabels(labels, rotation=90, fontsize=6)
    axes[2].set_yticks(range(T))
    axes[2].set_yticklabels(labels, fontsize=6)
    fig.tight_layout()
    return fig


def draw_decay(np, plt, args):
    """rope_decay.png: `roformer rope-decay` for D = 32, 64, 128, equal to the numpy sum."""
    fig, ax = plt.subplots(figsize=(7.5, 4.3))
    for dim, colour in ((32, "#1f77b4"), (64, "#2ca02c"), (128, "#d62728")):
        text = run_roformer(args, ["rope-decay", "--dim", str(dim), "--base", f"{args.base:g}",
                                   "--max-distance", "256"])
        rows = list(csv.DictReader(io.StringIO(text)))
        if len(rows) != 257:  # distances 0, 1, …, 256
            raise Refusal(f"roformer rope-decay --dim {dim} printed {len(rows)} rows, not 257 "
                          "(distances 0 … 256); is --roformer the project's CLI?")
        distance = np.array([float(r["distance"]) for r in rows])
        bound = np.array([float(r["bound"]) for r in rows])
        ours = decay_bound(np, dim, args.base, distance)
        worst = float(np.abs(ours - bound).max())
        if worst > 1e-5 * max(1.0, float(bound.max())):  # the CSV prints six decimals
            raise Refusal(f"roformer rope-decay --dim {dim} differs from the numpy sum by {worst:g}"
                          " (src/ropelab/rope_decay.cpp vs decay_bound here); one of them is wrong")
        ax.plot(distance, bound, color=colour, lw=1.4, label=f"D = {dim}")
    ax.set_xlabel("relative distance |m − n|")
    ax.set_ylabel("relative upper bound  (1/(D/2)) Σ_j |S_j|")
    ax.set_title(f"RoPE's long-range decay (RoFormer §3.4.3, Fig. 2), base {args.base:g}:\n"
                 "`roformer rope-decay`, equal to a numpy sum of the same terms", fontsize=10)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


DRAW = {"turn": draw_turn, "clocks": draw_clocks, "scores": draw_scores, "decay": draw_decay}


# ---- writing --------------------------------------------------------------------------------
def parse(argv):
    p = argparse.ArgumentParser(
        description="Draw RoPE's pictures (rope_turn/clocks/scores/decay.png) from the formula, "
                    "`roformer rope-decay` and a trained run's `roformer attention`.",
        epilog="Exit codes: 0 written, 2 bad arguments or a failed step, 3 numpy/matplotlib "
               "missing. Example: python3 scripts/plot_rope.py --run runs/classroom")
    p.add_argument("--out", default="docs/img", help="directory for rope_*.png (default docs/img)")
    p.add_argument("--run", help="trained run for the scores figure (e.g. runs/classroom)")
    p.add_argument("--roformer", default="build/roformer", help="the CLI (default build/roformer)")
    p.add_argument("--figures", default=",".join(FIGURES),
                   help="comma-separated subset of " + ",".join(FIGURES) + " (default all)")
    p.add_argument("--layer", type=int, default=DEFAULT_LAYER, help="trained head's layer")
    p.add_argument("--head", type=int, default=DEFAULT_HEAD, help="trained head's index")
    p.add_argument("--text", default=TEXT, help="the text the trained head reads")
    p.add_argument("--dim", type=int, default=HEAD_SIZE, help="head size D for the formula")
    p.add_argument("--base", type=float, default=BASE, help="frequency base (default 10000)")
    args = p.parse_args(argv)
    figures = [f for f in args.figures.split(",") if f]
    unknown = [f for f in figures if f not in FIGURES]
    if unknown or not figures:
        p.error(f"--figures {args.figures}: pick from {','.join(FIGURES)}")
    if args.dim < 2 or args.dim % 2:
        p.error(f"--dim {args.dim} must be even and ≥ 2 (RoPE turns pairs of dims)")
    if not (args.base > 1.0 and math.isfinite(args.base)):
        p.error(f"--base {args.base:g} must be a finite number > 1 (the paper uses 10000)")
    if not os.path.isdir(args.out):
        p.error(f"--out {args.out} is not a directory; create it first")
    return args, figures


def main(argv):
    args, figures = parse(argv)
    libs = plotting("plot_rope", numpy=True)
    if libs is None:
        return 3
    np, _, plt = libs
    try:
        for name in figures:
            check_replaceable(os.path.join(args.out, f"rope_{name}.png"), SOFTWARE, "plot_rope.py")
        for name in figures:
            path = os.path.join(args.out, f"rope_{name}.png")
            save(DRAW[name](np, plt, args), path, plt, SOFTWARE)
            print(path)
    except Refusal as e:
        print(f"plot_rope: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
