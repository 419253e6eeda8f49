// Room — fast: the two xsimd calls whose spelling moved between the xsimd of Debian 12 (8.1) and
// Debian 13 (13.x), in one place, so the kernels read the same on both:
//   lane_sum(b)                     Σ of a batch's lanes: hadd up to 12, reduce_add from 13 on
//                                   (13 removed hadd)
//   lane_constant<Index, Gen>()     a compile-time batch of lane indices made by Gen::get(i, n):
//                                   make_batch_constant<batch<U, A>, Gen> up to 12,
//                                   <U, Gen, A> in 13.0 and 13.1 (xsimd's changelog; not built
//                                   here), <U, A, Gen> in 13.2 (Debian 13), <U, Gen, A> again
//                                   from 14.0 on (Homebrew, Debian forky)
// Both are templates on the batch type, so each instance carries its architecture in its name:
// safe for the per-ISA files (the One Definition Rule note in simd_kernels.hpp).
#pragma once

#include <xsimd/xsimd.hpp>

namespace rf {
namespace {  // internal linkage in each file that includes it, like simd_kernels.hpp

template <class Batch>
typename Batch::value_type lane_sum(const Batch& b) {
#if XSIMD_VERSION_MAJOR >= 13
    return xsimd::reduce_add(b);
#else
    return xsimd::hadd(b);
#endif
}

template <class IndexBatch, class Generator>
constexpr auto lane_constant() {
#if XSIMD_VERSION_MAJOR * 100 + XSIMD_VERSION_MINOR >= 1302 && XSIMD_VERSION_MAJOR < 14
    return xsimd::make_batch_constant<typename IndexBatch::value_type,
                                      typename IndexBatch::arch_type, Generator>();
#elif XSIMD_VERSION_MAJOR >= 13
    return xsimd::make_batch_constant<typename IndexBatch::value_type, Generator,
                                      typename IndexBatch::arch_type>();
#else
    return xsimd::make_batch_constant<IndexBatch, Generator>();
#endif
}

}  // namespace
}  // namespace rf
