// Room — ropelab: the long-range decay bound, one running complex sum.
//
// Legend: d head size, h = d/2 pairs, Δ distance, S_j the partial sum of the first j terms.
#include "ropelab/rope_decay.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

#include "position/rope_angles.hpp"

namespace rf {

// bound(Δ) = (1/h) Σ_{j=1}^{h} |S_j|,  S_j = S_{j−1} + e^{iΔθ_{j−1}},  θ_i = base^(−2i/d)
double rope_decay_bound(size_t dim, double base, double distance) {
    if (dim < 2 || dim % 2 != 0)
        throw std::invalid_argument("rope_decay_bound: dim = " + std::to_string(dim) +
                                    " must be even and ≥ 2");
    if (!(base > 0.0)) throw std::invalid_argument("rope_decay_bound: base must be > 0");
    const size_t h = dim / 2;
    std::complex<double> partial(0.0, 0.0);
    double total = 0.0;
    for (size_t i = 0; i < h; ++i) {
        const double theta =
            std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dim));
        partial += std::polar(1.0, distance * theta);
        total += std::abs(partial);
    }
    return total / static_cast<double>(h);
}

double rope_decay_smallest_base(size_t dim, double largest_distance) {
    // the one rule on RoPE's angles (position/rope_angles.hpp), in double's range
    return rope_angle_base_range(dim, largest_distance, 1.0, 1.0, kDoubleAngles).lo;
}

}  // namespace rf
