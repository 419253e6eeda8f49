#!/usr/bin/env python3
"""The map of the house is one map: docs/architecture.md, CMakeLists.txt and src/ agree.

    tests/architecture/check_map.py [--repo DIR] [--cmake FILE] [--doc FILE] [--src DIR]

Fails, naming each difference, unless
  (a) the stage table of docs/architecture.md (between <!-- stages:begin --> and
      <!-- stages:end -->) lists RF_STAGE_ORDER of CMakeLists.txt, in its order; the rows
      labelled "Stage N" are RF_CORE_STAGES, numbered 1, 2, … in order, and the others are
      labelled "Room"; each row's folder is src/<stage>/ and its "may use" is RF_USES_<stage>
      ("core" standing for RF_CORE_STAGES, "—" for nothing);
  (b) every folder under src/ is a stage and every stage a folder, and every file the table
      names as an interface is in its stage's folder;
  (c) every file under src/<stage>/ starts with its stage's label line:
      "// Stage N — <stage>: …" in the core, "// Room — <stage>: …" in a room.
Then it breaks copies of its inputs (a row dropped, two stages swapped, a label wrong, a folder
added) and fails unless each is found: the check can fail.

Prints every finding, then PASS or FAIL (exit status 1).
"""
import argparse
import os
import re
import sys

LABEL_LINE = re.compile(r"^// (?:Stage (\d+)|Room) — ([a-z_]+): \S")


def cmake_sets(text):
    """Every set(NAME values…) of a CMake file, in order, ${VAR}s expanded from earlier sets."""
    text = re.sub(r"#[^\n]*", "", text)  # comments (the sets read here hold no '#')
    values = {}
    for m in re.finditer(r"\bset\(\s*([A-Za-z_][A-Za-z0-9_]*)([^()]*)\)", text):
        words = []
        for w in m.group(2).split():
            ref = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", w)
            words += values.get(ref.group(1), []) if ref else [w]
        values[m.group(1)] = words
    return values


def doc_rows(text):
    """[(line number, [cells])] of the stage table between the markers; None if no markers."""
    lines = text.split("\n")
    try:
        begin = next(i for i, l in enumerate(lines) if l.strip() == "<!-- stages:begin -->")
        end = next(i for i, l in enumerate(lines) if l.strip() == "<!-- stages:end -->")
    except StopIteration:
        return None
    rows = []
    for i in range(begin + 1, end):
        line = lines[i].strip()
        if not line.startswith("|") or re.fullmatch(r"\|[\s|:-]+\|", line):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].lower() == "label":
            continue  # the header
        rows.append((i + 1, cells))
    return rows


def read_src(src):
    """{folder: {relative path: first line}} of every file under src/<folder>/."""
    tree = {}
    for folder in sorted(os.listdir(src)):
        top = os.path.join(src, folder)
        if not os.path.isdir(top):
            continue
        files = {}
        for dirpath, _, names in os.walk(top):
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[os.path.relpath(path, src)] = f.readline().rstrip("\n")
        tree[folder] = files
    return tree


def findings(cmake_text, doc_text, tree, where):
    """The differences between the three, each a line naming the place; [] when they agree."""
    out = []
    sets = cmake_sets(cmake_text)
    order = sets.get("RF_STAGE_ORDER")
    core = sets.get("RF_CORE_STAGES")
    if not order:
        return [f"{where['cmake']}: no set(RF_STAGE_ORDER …)"]
    if core is None:
        return [f"{where['cmake']}: no set(RF_CORE_STAGES …)"]
    if order[:len(core)] != core:
        out.append(f"{where['cmake']}: RF_CORE_STAGES ({' '.join(core)}) is not the start of "
                   f"RF_STAGE_ORDER ({' '.join(order)})")
    rows = doc_rows(doc_text)
    if rows is None:
        return out + [f"{where['doc']}: no <!-- stages:begin --> … <!-- stages:end --> table"]
    doc = where["doc"]

    # (a) the order, the labels, the folders, what each may use
    listed = [cells[1] if len(cells) > 1 else "" for _, cells in rows]
    if listed != order:
        missing = [s for s in order if s not in listed]
        extra = [s for s in listed if s not in order]
        if missing:
            out.append(f"{doc}: the stage table lacks {', '.join(missing)}, which RF_STAGE_ORDER lists")
        if extra:
            out.append(f"{doc}: the stage table lists {', '.join(extra)}, not in RF_STAGE_ORDER")
        if not missing and not extra:
            at = next(i for i, (a, b) in enumerate(zip(listed, order)) if a != b)
            out.append(f"{doc}: stage {at + 1} of the table is {listed[at]}, RF_STAGE_ORDER's is "
                       f"{order[at]} (the table: {' '.join(listed)}; CMake: {' '.join(order)})")
    labels = {}
    for line, cells in rows:
        if len(cells) != 5:
            out.append(f"{doc}:{line}: a row needs 5 cells (label, stage, folder, interface, may use)")
            continue
        label, stage, folder, interface, uses = cells
        want = f"Stage {core.index(stage) + 1}" if stage in core else "Room"
        labels[stage] = label
        if label != want:
            out.append(f"{doc}:{line}: {stage} is labelled '{label}', CMake makes it '{want}'")
        if folder.strip("`") != f"src/{stage}/":
            out.append(f"{doc}:{line}: {stage}'s folder is {folder}, not `src/{stage}/`")
        if f"RF_USES_{stage}" not in sets:
            out.append(f"{where['cmake']}: no set(RF_USES_{stage} …) for {stage}")
        else:
            named = [] if uses in ("—", "-", "") else re.split(r"[,\s]+", uses.strip())
            doc_uses = set()
            for w in named:
                doc_uses |= set(core) if w == "core" else {w}
            cmake_uses = set(sets[f"RF_USES_{stage}"])
            if doc_uses != cmake_uses:
                more = sorted(doc_uses - cmake_uses, key=lambda s: (s not in order, order.index(s) if s in order else 0))
                less = sorted(cmake_uses - doc_uses, key=lambda s: (s not in order, order.index(s) if s in order else 0))
                out.append(f"{doc}:{line}: {stage} may use {uses!r} here, RF_USES_{stage} differs"
                           + (f"; only here: {', '.join(more)}" if more else "")
                           + (f"; only in CMake: {', '.join(less)}" if less else ""))
        # (b) the interface files are where the table says
        for name in re.findall(r"`([A-Za-z0-9_]+\.(?:hpp|cpp))`", interface):
            if f"{stage}/{name}" not in tree.get(stage, {}):
                out.append(f"{doc}:{line}: {stage}'s interface {name} is not in src/{stage}/")

    # (b) every folder a stage, every stage a folder
    for folder in tree:
        if folder not in order:
            out.append(f"{where['src']}/{folder}/: a folder that is no stage (RF_STAGE_ORDER, {doc})")
    for stage in order:
        if stage not in tree:
            out.append(f"{where['src']}/{stage}/: stage {stage} has no folder")

    # (c) every file's first line names its stage and its label
    for folder, files in tree.items():
        if folder not in order:
            continue
        want = f"Stage {core.index(folder) + 1}" if folder in core else "Room"
        for path, first in files.items():
            m = LABEL_LINE.match(first)
            if not m:
                out.append(f"{where['src']}/{path}:1: no label line, want '// {want} — {folder}: …'")
                continue
            label = f"Stage {m.group(1)}" if m.group(1) else "Room"
            if label != want or m.group(2) != folder:
                out.append(f"{where['src']}/{path}:1: says '{label} — {m.group(2)}', "
                           f"want '{want} — {folder}' ({doc})")
    return out


def broken_copies(cmake_text, doc_text, tree):
    """(what was broken, its inputs): each must give a finding."""
    rows = doc_rows(doc_text) or []
    lines = doc_text.split("\n")
    cases = []
    if len(rows) > 2:
        drop = rows[len(rows) // 2][0] - 1
        cases.append(("a row of the table dropped",
                      cmake_text, "\n".join(lines[:drop] + lines[drop + 1:]), tree))
        a, b = rows[-3][1][1], rows[-2][1][1]
        swapped = re.sub(r"(set\(RF_STAGE_ORDER[^)]*)", lambda m: re.sub(
            rf"\b{a}\b|\b{b}\b", lambda w: b if w.group(0) == a else a, m.group(1)), cmake_text)
        cases.append((f"{a} and {b} swapped in RF_STAGE_ORDER", swapped, doc_text, tree))
        stage = rows[-1][1][1]
        more = re.sub(rf"(set\(RF_USES_{stage}\b[^)]*)", r"\1 nonexistent_stage", cmake_text)
        cases.append((f"RF_USES_{stage} given one more stage", more, doc_text, tree))
    for folder, files in tree.items():
        if files:
            path = next(iter(files))
            wrong = {f: dict(v) for f, v in tree.items()}
            wrong[folder][path] = "// Stage 99 — elsewhere: a file with the wrong label"
            cases.append((f"{path}'s label line wrong", cmake_text, doc_text, wrong))
            break
    extra = dict(tree)
    extra["unlisted_folder"] = {}
    cases.append(("a folder of src/ that is no stage", cmake_text, doc_text, extra))
    return cases


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--cmake", help="default: REPO/CMakeLists.txt")
    ap.add_argument("--doc", help="default: REPO/docs/architecture.md")
    ap.add_argument("--src", help="default: REPO/src")
    args = ap.parse_args()
    cmake = args.cmake or os.path.join(args.repo, "CMakeLists.txt")
    doc = args.doc or os.path.join(args.repo, "docs", "architecture.md")
    src = args.src or os.path.join(args.repo, "src")
    with open(cmake, encoding="utf-8") as f:
        cmake_text = f.read()
    with open(doc, encoding="utf-8") as f:
        doc_text = f.read()
    tree = read_src(src)
    where = {"cmake": cmake, "doc": doc, "src": src}

    found = findings(cmake_text, doc_text, tree, where)
    for line in found:
        print(line)
    ok = not found
    if ok:  # only a map that agrees can show that a broken copy does not
        for what, c, d, t in broken_copies(cmake_text, doc_text, tree):
            caught = findings(c, d, t, where)
            print(f"broken copy, {what}: " + (caught[0] if caught else "NOT FOUND"))
            ok = ok and bool(caught)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
