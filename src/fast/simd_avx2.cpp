// Room — fast: the fast path's kernels for AVX2 + FMA (8 float lanes). CMakeLists.txt
// compiles this file alone with -mavx2 -mfma; simd.cpp calls it only on a CPU that has both.
#include "fast/simd_kernels.hpp"

namespace rf {

const SimdKernels& simd_kernels_avx2() {
    static const SimdKernels table = Kernels<xsimd::fma3<xsimd::avx2>>::table("avx2");
    return table;
}

}  // namespace rf
