// Stage 7 — train: how many threads OpenMP (our loops) and OpenBLAS (products) may use.
#pragma once

#include <cstddef>
#include <string>

namespace rf {

// n = 0 means every core. Sets both OpenMP's and OpenBLAS's pool; returns the count used.
// Same count → same results: no reduction in the library is split across threads by chance.
size_t set_num_threads(size_t n);

// What idle OpenMP workers do: $OMP_WAIT_POLICY as libgomp read it at start-up, or
// "active (libgomp's default)" when unset. The roformer binary sets it to passive for itself
// (src/cli/main.cpp); run logs print it, because with 2 threads it decides the speed.
std::string openmp_wait_policy();

}  // namespace rf
