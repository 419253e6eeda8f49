// Stage 2 — ops: the values of model.isa, the fast path's vector instruction set (simd.hpp
// has what they mean and chooses the kernels). Its own small header: the model's config
// includes it, and nothing else of simd.hpp.
#pragma once

#include <array>

#include "tensor/named_enum.hpp"

namespace rf {

enum class SimdIsa { automatic, sse2, avx2, avx512 };
constexpr std::array<NamedValue<SimdIsa>, 4> named_values(SimdIsa) {
    return {{{SimdIsa::automatic, "auto"},
             {SimdIsa::sse2, "sse2"},
             {SimdIsa::avx2, "avx2"},
             {SimdIsa::avx512, "avx512"}}};
}

}  // namespace rf
