// Stage 9 — cli: checks of a loaded run (see run_checks.hpp).
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

void warn_if_unfinished(size_t step, const Config& config, const std::string& run_dir) {
    if (step >= config.train.steps) return;
    std::fprintf(stderr,
                 "warning: %s holds the model at step %zu of %zu, not a finished run (it is "
                 "still training, or was stopped early); finish it with: roformer train "
                 "--resume --out %s (and the config it was started with)\n",
                 run_dir.c_str(), step, config.train.steps, shell_quote(run_dir).c_str());
}

size_t generation_context(const Config& config, RoFormer& model) {
    return std::min(config.data.seq_len, model.position().max_length());
}

}  // namespace rf::cli
