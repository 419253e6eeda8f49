#!/usr/bin/env python3
"""The stage order, held by the linker's view of the code (ctest `architecture_links`).

Every stage and room is its own static library (CMakeLists.txt, RF_STAGE_ORDER). This reads
each library's symbols (nm) and fails, naming the symbol and both stages, when a library's
code calls or uses a symbol of the project (namespace rf) that only a stage it may not use
defines: RF_USES_<stage> in CMakeLists.txt, followed through (what a used stage uses may be
reached too). Header-only code is left to the include check at configure time.

    check_links.py --build BUILD_DIR [--cmake CMakeLists.txt]     prints PASS or FAIL lines
"""
import argparse
import os
import re
import subprocess
import sys


def cmake_lists(path):
    text = re.sub(r"#[^\n]*", "", open(path, encoding="utf-8").read())
    sets = {}
    for name, body in re.findall(r"set\((RF_[A-Z_a-z]+)\s*([^)]*)\)", text):
        words = body.split()
        expanded = []
        for w in words:
            m = re.fullmatch(r"\$\{(RF_[A-Z_a-z]+)\}", w)
            expanded += sets.get(m.group(1), []) if m else [w]
        sets[name] = expanded
    order = sets["RF_STAGE_ORDER"]
    uses = {s: sets.get("RF_USES_" + s, []) for s in order}
    return order, uses


def reachable(stage, uses):
    seen, todo = set(), [stage]
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        todo += uses.get(s, [])
    return seen


def symbols(archive):
    out = subprocess.run(["nm", "-C", archive], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        m = re.match(r"^(?:[0-9a-f]+)? +([A-Za-z]) (.*)$", line)
        if not m or "rf::" not in m.group(2):
            continue
        kind, name = m.groups()
        if kind == "U":
            undefined.add(name)
        elif kind not in "N":
            defined.add(name)
    return defined, undefined


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--cmake", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "CMakeLists.txt"))
    a = ap.parse_args()
    order, uses = cmake_lists(a.cmake)
    defined, undefined = {}, {}
    for stage in order:
        archive = os.path.join(a.build, "libroformer_%s.a" % stage)
        if not os.path.exists(archive):
            print("FAIL: no library %s for stage %s (CMakeLists.txt builds one a stage)"
                  % (archive, stage))
            return 1
        defined[stage], undefined[stage] = symbols(archive)
    where = {}
    for stage in order:
        for name in defined[stage]:
            where.setdefault(name, set()).add(stage)
    failures = 0
    for stage in order:
        allowed = reachable(stage, uses)
        for name in sorted(undefined[stage] - defined[stage]):
            owners = where.get(name, set())
            if owners and not owners & allowed:
                failures += 1
                if failures <= 20:
                    print("FAIL: %s uses %s, defined in %s, a stage it may not use (RF_USES_%s: %s)"
                          % (stage, name, ", ".join(sorted(owners)), stage,
                             " ".join(uses[stage]) or "nothing"))
    if failures:
        print("FAIL: %d uses across the stage order (docs/architecture.md)" % failures)
        return 1
    print("PASS: %d libraries, every use of the project's symbols within its stage's order"
          % len(order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
