// Room — fast: AdamW's update on the fast path (model.fused = true): step()'s formulas
// (adamw.hpp; the readable loop is AdamW::step in adamw.cpp) with the element loop in SIMD lanes of Real
// — SimdKernels::adamw_update of the ISA in force (src/fast/simd_kernels.hpp) — instead of
// double scalars. The scalar factors are still computed once in double; per element the
// moments and the weight are computed in Real, so the result is step()'s to float rounding
// (a few ulps per update; tests/lesson/test_adamw.cpp holds them together over several steps).
// Chunks are disjoint, so the result does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>

#include "fast/adamw_vectorized.hpp"
#include "fast/simd.hpp"

namespace rf {

void adamw_step_vectorized(AdamW& optimizer, double lr) {
    const size_t t = optimizer.count_update();
    const AdamWOptions& options = optimizer.options();
    const SimdKernels& kernels = simd_kernels();
    const double b1 = options.beta1, b2 = options.beta2;
    const double correction1 = 1.0 - std::pow(b1, static_cast<double>(t));
    const double correction2 = 1.0 - std::pow(b2, static_cast<double>(t));
    // ε as a Real, never 0 when ε > 0: step() adds ε in double, where a row with no gradient
    // (m = v = 0) moves by 0/ε = 0; an ε that rounds to 0 in Real would make that 0/0 = nan.
    // (config validation refuses such an ε; AdamW used directly may still be given one.)
    const Real eps = std::max(Real(options.eps), std::numeric_limits<Real>::denorm_min());
    const std::vector<NamedParameter>& params = optimizer.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
        Tensor p = params[i].tensor;  // (a handle: the same storage)
        if (!p.has_grad()) continue;
        const double shrink = params[i].decay ? 1.0 - lr * options.weight_decay : 1.0;
        const AdamWScalars k{Real(b1),
                             Real(1.0 - b1),
                             Real(b2),
                             Real(1.0 - b2),
                             Real(lr / correction1),
                             Real(1.0 / correction2),
                             eps,
                             Real(shrink)};
        Real* theta = p.data();
        const Real* g = p.grad().data();
        Real* m = optimizer.first_moment(i).data();
        Real* v = optimizer.second_moment(i).data();
        const size_t n = p.numel();
        constexpr size_t chunk = 8192;  // a multiple of every lane count
        const long chunks = long((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) if (chunks > 1)
        for (long c = 0; c < chunks; ++c) {
            const size_t begin = size_t(c) * chunk, end = std::min(n, begin + chunk);
            kernels.adamw_update(theta + begin, g + begin, m + begin, v + begin, end - begin, k);
        }
    }
}

}  // namespace rf
