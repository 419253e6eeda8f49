// Stage 7 — train: how many threads OpenMP (our loops) and OpenBLAS (products) may use.
#pragma once

#include <cstddef>

namespace rf {

// n = 0 means every core. Sets both OpenMP's and OpenBLAS's pool; returns the count used.
// Same count → same results: no reduction in the library is split across threads by chance.
size_t set_num_threads(size_t n);

}  // namespace rf
