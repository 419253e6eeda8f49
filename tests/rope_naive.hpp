// The lesson's RoPE tests share these: random rows, and R_m written out as the paper's
// block-diagonal matrix and its product with a row (tests/lesson/test_rope.cpp,
// test_rope_kernel.cpp, test_rope_variants.cpp).
#pragma once

#include <cmath>
#include <vector>

#include "position/rope.hpp"
#include "tensor/random.hpp"

namespace rf::testing {

inline Tensor random_tensor(const Shape& shape, Rng& rng) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<Real>(rng.normal());
    return t;
}

// The naive reference: R_m as an explicit D×D matrix (row-major, double), identity outside
// the r/2 rotation blocks. θ_i from exp/log, not pow, so it shares no code with the library.
inline std::vector<double> naive_rotation(const RopeOptions& o, double m) {
    const size_t D = o.head_dim, r = o.rotary_dims;
    const double rr = static_cast<double>(r);
    const double base =
        o.ntk_factor == 1.0 ? o.base : o.base * std::exp(std::log(o.ntk_factor) * rr / (rr - 2));
    std::vector<double> R(D * D, 0.0);
    for (size_t d = 0; d < D; ++d) R[d * D + d] = 1.0;
    for (size_t i = 0; i < r / 2; ++i) {
        const double theta = std::exp(-2.0 * static_cast<double>(i) / rr * std::log(base));
        const double angle = m / o.interpolation_factor * theta;
        const size_t lo = o.pairing == RopePairing::interleaved ? 2 * i : i;
        const size_t hi = o.pairing == RopePairing::interleaved ? 2 * i + 1 : i + r / 2;
        R[lo * D + lo] = std::cos(angle);
        R[lo * D + hi] = -std::sin(angle);
        R[hi * D + lo] = std::sin(angle);
        R[hi * D + hi] = std::cos(angle);
    }
    return R;
}

// y = R x for a D×D matrix R (row-major, double) and a row x of D numbers.
inline std::vector<double> matvec(const std::vector<double>& R, const Real* x, size_t D) {
    std::vector<double> y(D, 0.0);
    for (size_t a = 0; a < D; ++a)
        for (size_t b = 0; b < D; ++b) y[a] += R[a * D + b] * static_cast<double>(x[b]);
    return y;
}

// Do two tables hold the same cos and sin, bit for bit, in their first `rows` rows?
inline bool same_rows(const RopeTable& a, const RopeTable& b, size_t rows, size_t half) {
    for (size_t m = 0; m < rows; ++m)
        for (size_t i = 0; i < half; ++i)
            if (a.cos_row(m)[i] != b.cos_row(m)[i] || a.sin_row(m)[i] != b.sin_row(m)[i]) return false;
    return true;
}

}  // namespace rf::testing
