// Room — fast: the fast path's kernels for AVX-512 (16 float lanes). CMakeLists.txt compiles
// this file alone with -mavx512f -mavx512cd -mavx512bw -mavx512vl -mavx512dq; simd.cpp calls it
// only on a CPU that has all five.
#include "fast/simd_kernels.hpp"

namespace rf {

const SimdKernels& simd_kernels_avx512() {
    static const SimdKernels table = Kernels<xsimd::avx512bw>::table("avx512");
    return table;
}

}  // namespace rf
