// Stage 7 — train: a run's threads (see threads.hpp).
#include "train/threads.hpp"

#include <cstdlib>

#include "model/execution_plan.hpp"
#include "ops/ops.hpp"

namespace rf {

size_t apply_threading(const Config& config) {
    return apply_threading(config, config.train.threads);
}

size_t apply_threading(const Config& config, size_t threads) {
    return set_threading(execution_plan(config.model).threading(threads)).threads;
}

std::string openmp_wait_policy() {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    return policy ? std::string(policy) : std::string("active (libgomp's default)");
}

}  // namespace rf
