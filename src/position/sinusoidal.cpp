// Stage 4 — position: fixed sinusoidal absolute positions (Vaswani et al. 2017), added.
//
// Legend: B batch, T sequence length, C hidden size, m a position.
//   PE[m, 2i]   = sin(m · base^(−2i/C))
//   PE[m, 2i+1] = cos(m · base^(−2i/C))
#include <cmath>

#include "position/schemes.hpp"

namespace rf {

Array sinusoidal_table(size_t length, size_t hidden, double base) {
    Array table = Array::from_shape({length, hidden});
    Real* p = table.data();
    for (size_t m = 0; m < length; ++m)
        for (size_t d = 0; d < hidden; ++d) {
            const size_t pair = d / 2;   // 2i and 2i+1 share a frequency
            const double frequency =
                std::pow(base, -2.0 * static_cast<double>(pair) / static_cast<double>(hidden));
            const double angle = static_cast<double>(m) * frequency;
            p[m * hidden + d] = static_cast<Real>(d % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    return table;
}

// out = x + PE[offset … offset+T−1]   x:[B,T,C]; the table has no gradient.
Tensor SinusoidalPosition::embed(const Tensor& x, size_t offset) {
    const size_t T = x.dim() >= 2 ? x.size(1) : 0;
    // Keep the longest table seen; rows never change when it grows (each row depends on m only).
    if (offset + T > capacity()) table_ = Tensor(sinusoidal_table(offset + T, hidden_, base_));
    return add_position_rows(x, table_, offset);
}

}  // namespace rf
