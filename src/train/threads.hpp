// Stage 7 — train: how many threads OpenMP (our loops) and OpenBLAS (products) may use.
#pragma once

#include <cstddef>
#include <string>

namespace rf {

// n = 0 means every core. Sets both OpenMP's and OpenBLAS's pool; returns the count used.
// Same count → same results: no reduction in the library is split across threads by chance.
// split_products (model.fused): large products split their rows over our threads
// (set_split_products in src/ops); false leaves their threading to OpenBLAS, as the composed
// path always has, so model.fused = false reproduces its numbers bit for bit.
size_t set_num_threads(size_t n, bool split_products);

// What idle OpenMP workers do: $OMP_WAIT_POLICY as libgomp read it at start-up, or
// "active (libgomp's default)" when unset. The roformer binary sets it to passive for itself
// (src/cli/main.cpp); run logs print it, because with 2 threads it decides the speed.
std::string openmp_wait_policy();

}  // namespace rf
