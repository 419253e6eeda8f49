// Run — a run's threads (see threads.hpp).
#include "ops/threading.hpp"
#include "run/threads.hpp"

#include <cstdlib>

#include "ops/ops.hpp"
#include "fast/simd.hpp"

namespace rf {

size_t apply_threading(const Config& config) {
    return apply_threading(config, config.train.threads);
}

size_t apply_threading(const Config& config, size_t threads) {
    set_simd_isa(config.model.isa);
    return set_threading({threads, config.model.fused}).threads;  // ops/threading.hpp, Threading
}

std::string fast_path_line(const ModelConfig& model) {
    if (!model.fused)
        return "fast path off (model.fused = false): the composed ops, baseline build";
    const SimdKernels& kernels = simd_kernels();
    return std::string("fast path: ") + kernels.name + " kernels, " +
           std::to_string(kernels.lanes) + (sizeof(Real) == 4 ? " float" : " double") +
           " lanes (model.isa = " + enum_name(model.isa) + "; this CPU has " + supported_isas() +
           ")";
}

std::string openmp_wait_policy() {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    return policy ? std::string(policy) : std::string("active (libgomp's default)");
}

}  // namespace rf
