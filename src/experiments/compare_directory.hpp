// Room — experiments: the comparison directory `compare --out DIR` writes, as one transaction's
// start (docs/training.md, "What every command guarantees").
//
// DIR is created if missing and locked before anything is checked, so a second compare of DIR
// is told who holds it. Then, under the lock, DIR must be compare's own: new, empty, or holding
// a comparison (its lock record, a <scheme>/seed<k>/ run, a summary.md or curves.csv of ours).
// A training run, a fine-tune or an HF directory is named by the one reader
// (run/directory_kind.hpp); a folder of the user's (`--out ~/Documents`) and a user's file under
// one of compare's output names are refused. The pid record is written only once DIR is known
// to be ours, and a DIR this call created (with the parents it created) is removed again with a
// refusal.
#pragma once

#include <string>
#include <vector>

#include "run/run_lock.hpp"

namespace rf {

RunLock lock_comparison_directory(const std::string& out_dir,
                                  const std::vector<std::string>& schemes, bool plot);

// Declared after the lock: when the comparison fails by an exception (a full disk, a
// file-size limit, a refused run) before any of its runs holds a file, what it made is
// removed — the empty <scheme>/seed<k> directories, its lock record, and DIR itself and its
// parents when the lock created them — so no `lock` is left where nothing else is. A comparison with anything in
// it is left as it is, for the same command to continue.
class EmptyComparisonCleanup {
public:
    EmptyComparisonCleanup(const RunLock& lock, std::string out_dir);
    ~EmptyComparisonCleanup();
    EmptyComparisonCleanup(const EmptyComparisonCleanup&) = delete;
    EmptyComparisonCleanup& operator=(const EmptyComparisonCleanup&) = delete;

private:
    const RunLock& lock_;
    std::string out_dir_;
    int exceptions_;  // std::uncaught_exceptions() when made
};

}  // namespace rf
