// Room — run: a run's threads (see threads.hpp).
#include "fast/threading.hpp"
#include "run/threads.hpp"

#include <cctype>
#include <cstdlib>

#include "ops/ops.hpp"
#include "fast/fast_config.hpp"
#include "fast/openmp.hpp"
#include "fast/simd.hpp"
#include "config/memory_estimate.hpp"

namespace rf {

size_t apply_threading(const Config& config) {
    return apply_threading(config, config.train.threads);
}

size_t apply_threading(const Config& config, size_t threads) {
    // Under ulimit -v, before the first product: OpenBLAS's allocator spins, never fails.
    check_products_address_space(config, threads ? threads : configured_threads(config));
    set_simd_isa(config.fast.isa);
    return set_threading(threading_for(config.fast, threads)).threads;  // fast/threading.hpp
}

std::string threads_line(size_t threads) {
    if (!kOpenMP)
        return "threads " + std::to_string(threads) +
               " (a build without OpenMP: one thread, whatever train.threads asks)";
    return "threads " + std::to_string(threads) + " (OpenMP wait policy " + openmp_wait_policy() +
           ")";
}

std::string openmp_wait_policy() {
    const std::string kDefault = "libgomp's default (spin a while, then sleep)";
    const char* set = std::getenv("OMP_WAIT_POLICY");
    if (set == nullptr) return kDefault;
    // libgomp's own reading (env.c, parse_wait_policy): blanks around the word, any case.
    std::string word(set);
    word.erase(0, word.find_first_not_of(" \t\n\v\f\r"));
    word.erase(word.find_last_not_of(" \t\n\v\f\r") + 1);
    for (char& c : word) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (word == "active" || word == "passive") {
        const char* spin = std::getenv("GOMP_SPINCOUNT");
        return spin == nullptr ? word
                               : word + ", after spinning GOMP_SPINCOUNT=" + std::string(spin);
    }
    return kDefault + ": OMP_WAIT_POLICY='" + std::string(set) +
           "' is neither active nor passive, so libgomp ignored it";
}

}  // namespace rf
