// Stage 7 — train: thread count for OpenMP and OpenBLAS.
#include "train/threads.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "ops/ops.hpp"

namespace rf {

size_t set_num_threads(size_t n, bool split_products) {
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    omp_set_num_threads(static_cast<int>(n));
    openblas_set_num_threads(static_cast<int>(n));
    set_split_products(split_products);
    return n;
}

std::string openmp_wait_policy() {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    return policy ? std::string(policy) : std::string("active (libgomp's default)");
}

}  // namespace rf
