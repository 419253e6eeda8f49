// Room — cli: checks of a loaded run (see run_checks.hpp).
#include "cli/run_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "io/shell_quote.hpp"

namespace rf::cli {

void require_objective(const Config& config, const std::string& run_dir, data::Objective needed) {
    const data::Objective trained = config.train.objective;
    if (trained == needed) return;
    if (needed == data::Objective::clm)
        throw std::invalid_argument("generate needs a causal LM run (train.objective = clm); " +
                                    run_dir + " was trained with mlm — use fill-mask");
    throw std::invalid_argument("fill-mask needs a masked LM run (train.objective = mlm); " +
                                run_dir + " was trained with clm — use generate");
}

size_t generation_context(const Config& config, RoFormer& model) {
    return std::min(config.data.seq_len, model.position().max_length());
}

}  // namespace rf::cli
