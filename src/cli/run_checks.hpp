// Stage 9 — cli: what the commands check about a loaded run before they use it.
#pragma once

#include <cstddef>
#include <string>

#include "config/config.hpp"
#include "data/objective.hpp"
#include "finetune/run_kind.hpp"  // require_pretraining_run: a fine-tune directory is refused naming classify
#include "model/roformer.hpp"

namespace rf::cli {

// Refuses (std::invalid_argument, one line naming run_dir and the command to use instead) a
// run trained with the other objective: generate needs clm, fill-mask needs mlm.
void require_objective(const Config& config, const std::string& run_dir, data::Objective needed);

// Every command states what it serves: a run whose checkpoint is before its last step (one
// still training, or stopped by --stop-after or a signal) is served with one warning line on
// stderr naming the step, and how to finish it.
void warn_if_unfinished(size_t step, const Config& config, const std::string& run_dir);

// The context a run generates with: its training data.seq_len, never more than the position
// scheme can encode (a learned table has max_positions rows).
size_t generation_context(const Config& config, RoFormer& model);

}  // namespace rf::cli
