// Stage 2 — ops: the process's one threading setting (see ops.hpp, Threading).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <thread>

#include "ops/ops.hpp"

namespace rf {

static Threading g_threading;  // the setting in force; split_products on until set

Threading set_threading(Threading setting) {
    if (setting.threads == 0) setting.threads = std::max(1u, std::thread::hardware_concurrency());
    omp_set_num_threads(static_cast<int>(setting.threads));
    openblas_set_num_threads(static_cast<int>(setting.threads));
    g_threading = setting;
    return g_threading;
}

const Threading& threading() { return g_threading; }

}  // namespace rf
