// Room — experiments: a comparison's runs spread over the ranks of an MPI job.
//
//   mpirun -np P roformer compare --config configs/compare_long.toml --out runs/long
//
// Rank 0 does everything a local compare does — the directory lock, the plan, skipping
// finished runs, curves.csv, summary.md, the plot — except training: the runs still to train
// are dealt round-robin over all P ranks (rank 0 included), each run trained whole on one rank
// as an ordinary 1-process run (threads as configured: train.threads = 1 and one rank per
// core is the efficient layout). Rank 0 then gathers every run's outcome. All ranks must see
// --out (one filesystem, as a cluster's home or scratch directory is): rank 0 reads the
// finished runs' metrics.csv from there. Every rank builds each run's config from the same
// preset and command line, so only names, seeds and directories travel.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/compare.hpp"

namespace rf {

struct RankRun {
    std::string scheme;
    size_t seed = 0;
    bool resume = false;
    std::string dir;
};

struct RankRunResult {
    bool ok = false;
    double seconds = 0;
    std::string error;  // when !ok: the run's one-line error, as its rank caught it
};

// Rank 0: sends `runs` to every rank, trains its own share, and returns every run's result
// (in the order of `runs`) once all ranks are done.
std::vector<RankRunResult> train_across_ranks(const ComparePreset& preset,
                                              const std::vector<RankRun>& runs);

// Every other rank: receives rank 0's list, trains its share, reports. Returns when done.
void serve_compare_ranks(const ComparePreset& preset);

}  // namespace rf
