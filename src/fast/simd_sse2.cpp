// Room — fast: the fast path's kernels for the build's baseline (SSE2 on x86-64, unless
// RF_NATIVE; NEON on arm64), compiled with the library's own flags: the floor every CPU of the
// kind runs.
#include "fast/simd_kernels.hpp"

namespace rf {

const SimdKernels& simd_kernels_sse2() {
    static const SimdKernels table =
        Kernels<xsimd::default_arch>::table(xsimd::default_arch::name());
    return table;
}

}  // namespace rf
