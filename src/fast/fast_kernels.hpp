// Fast — the fast path's kernels (model.fused = true): twins of the composed ops of
// src/model/kernels.hpp that compute the same functions faster (fast_kernels.cpp).
#pragma once

#include <memory>

#include "model/kernels.hpp"

namespace rf {

// The fast path's kernels; kernels_for (src/assembly/kernels_for.cpp) hands them to a model.
std::shared_ptr<const Kernels> fast_kernels();

}  // namespace rf
