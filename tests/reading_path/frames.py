# gdb's side of tests/reading_path/check.py (gdb -batch -x frames.py --args roformer train …):
# stops at the first call of RF_STEP_FUNCTION (step 1's train_step), then, in that thread, at
# RF_KERNEL_LOCATION (file:line, the line of RoPE's kernel that turns a pair), and writes the
# frames between the two to RF_FRAMES_OUT as JSON — the kernel's frame first, train_step's
# last, each with whether its function is virtual in its class — and lets the run finish.
import json
import os
import re

import gdb

OUT = os.environ["RF_FRAMES_OUT"]
STEP = os.environ["RF_STEP_FUNCTION"]
KERNEL = os.environ["RF_KERNEL_LOCATION"]


def write(result):
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(result, f)


def split_method(name):
    """("rf::RopePosition", "rotate") from "rf::RopePosition::rotate", cutting at the last
    '::' outside template brackets; None for a free function or a lambda."""
    depth, cut = 0, -1
    for i, c in enumerate(name):
        depth += c == "<"
        depth -= c == ">"
        if depth == 0 and name.startswith("::", i):
            cut = i
    if cut < 0 or "{lambda" in name or "(" in name:
        return None
    return name[:cut], name[cut + 2:]


def is_virtual(name):
    parts = split_method(name)
    if not parts:
        return False
    cls, method = parts
    try:
        text = gdb.execute(f"ptype {cls}", to_string=True)
    except gdb.error:
        return False
    return any(re.search(r"\bvirtual\b", l) and re.search(rf"[\s*&]{re.escape(method)}\(", l)
               for l in text.splitlines())


for setting in ("pagination off", "confirm off", "print frame-arguments none",
                "debuginfod enabled off", "breakpoint pending on"):
    try:
        gdb.execute("set " + setting)
    except gdb.error:
        pass  # (an older gdb without debuginfod)

step = gdb.Breakpoint(STEP)
gdb.execute("run")
if not gdb.selected_thread():
    write({"error": f"the run ended before {STEP} was called"})
    raise SystemExit
step.delete()
kernel = gdb.Breakpoint(KERNEL)
kernel.thread = gdb.selected_thread().global_num  # the step's thread, not OpenMP's workers
gdb.execute("continue")
frames = []
f = gdb.newest_frame() if gdb.selected_thread() else None
while f is not None:
    name = f.name() or "??"
    sal = f.find_sal()
    where = f"{os.path.relpath(sal.symtab.fullname()) if sal.symtab else '?'}:{sal.line}"
    frames.append({"name": name, "where": where, "virtual": is_virtual(name),
                   "openmp": "_omp_fn" in name or name.startswith("GOMP_")})
    if name == STEP:
        break
    f = f.older()
if not frames or frames[-1]["name"] != STEP:
    write({"error": f"stopped at {KERNEL} outside {STEP}, or never: "
                    + " ← ".join(x["name"] for x in frames[:20])})
else:
    write({"kernel": KERNEL, "frames": frames})
kernel.delete()
if gdb.selected_thread():
    gdb.execute("continue")  # the run finishes: step 2's counters are written at its end
