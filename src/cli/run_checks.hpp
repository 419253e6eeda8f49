// Room — cli: what the commands check about a loaded run before they use it.
#pragma once

#include <cstddef>
#include <string>

#include "config/config.hpp"
#include "data/objective.hpp"
#include "run/directory_kind.hpp"  // require_model_run, state_unfinished: the one reader of a run
#include "model/roformer.hpp"

namespace rf::cli {

// Refuses (std::invalid_argument, one line naming run_dir and the command to use instead) a
// run trained with the other objective: generate needs clm, fill-mask needs mlm.
void require_objective(const Config& config, const std::string& run_dir, data::Objective needed);

// The context a run generates with: its training data.seq_len, never more than the position
// scheme can encode (a learned table has max_positions rows).
size_t generation_context(const Config& config, RoFormer& model);

}  // namespace rf::cli
