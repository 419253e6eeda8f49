// Room — fast: the fast path's kernels (model.fused = true): twins of the composed ops of
// src/model/swappable_ops.hpp that compute the same functions faster (fast_kernels.cpp).
#pragma once

#include <memory>

#include "model/swappable_ops.hpp"

namespace rf {

// The fast path's kernels; swappable_ops_for (src/assembly/swappable_ops_for.cpp) hands them
// to a model.
std::shared_ptr<const SwappableOps> fast_kernels();

}  // namespace rf
