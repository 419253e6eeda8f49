// Room — run: the directories a command creates above what it writes, and their removal when
// it fails (`train --out a/b/run`, `import-hf … --out a/b/model` in a fresh checkout).
//
// A command makes its --out's missing parents as `mkdir -p` would. If it then fails — a
// refusal, a full disk, a signal — it leaves no empty directory behind that it made: it
// removes, innermost first, each directory it created, each only if it is empty, and stops at
// the first that is not (someone else's file is never removed, nor the directory holding it).
// RunLock (train, finetune, compare) and StagedDirectory (import-hf, export-hf) both use it.
#pragma once

#include <string>

namespace rf {

// The outermost of `dir` and its parents that does not exist now — the first directory
// `mkdir -p dir` would make — or "" when `dir` exists. A relative `dir` answers relative.
std::string outermost_missing(const std::string& dir);

// Removes `dir`, then each parent up to and including `top` (outermost_missing's answer, taken
// before they were made), each only if it is empty; "" removes nothing.
void remove_created_directories(const std::string& dir, const std::string& top);

}  // namespace rf
