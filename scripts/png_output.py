"""The one rule for the pictures scripts/plot_rope.py and scripts/plot_run.py draw: what they
may replace, and how they write (shared by both; the C++ side's rule is src/io/output_file.hpp).

A picture carries its script's name in the PNG's Software text chunk. An existing file is
replaced only when that chunk names the same script (and, for a script that asks for it, only
with --force): anything else — a user's file, a link, another script's picture — is refused
with one line. A picture is written to a temporary name first, then renamed over the old one,
so an interrupted draw leaves the old file or the new one, never half of either.
"""
import os


class Refusal(Exception):
    """One actionable line for the user; exit code 2."""


def drawn_by(path, software):
    """True when PATH is a regular file whose PNG Software chunk is SOFTWARE."""
    if not os.path.isfile(path) or os.path.islink(path):
        return False
    with open(path, "rb") as f:
        return software.encode() in f.read(64 << 20)


def check_replaceable(path, software, script, force=None):
    """Refuses to draw over PATH unless it is new or SCRIPT's own picture (force=False: the
    script asks for --force before it redraws even its own)."""
    if not os.path.lexists(path):
        return
    if force is False and drawn_by(path, software):
        raise Refusal(f"{path} exists; pass --force to redraw it, or pick another --out")
    if not drawn_by(path, software):
        raise Refusal(f"{path} exists and was not drawn by {script}; "
                      + ("--force replaces only this script's own pictures: " if force else "")
                      + "move it away or pick another --out")


def save(fig, path, plt, software):
    """Writes FIG to PATH through a temporary file in the same folder, then closes it."""
    temporary = f"{path}.tmp-{os.getpid()}.png"
    try:
        fig.savefig(temporary, dpi=100, metadata={"Software": software})
        os.replace(temporary, path)
    finally:
        plt.close(fig)
        if os.path.exists(temporary):
            os.remove(temporary)
