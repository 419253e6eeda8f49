// Stage 4 — position: fixed sinusoidal absolute positions (Vaswani et al. 2017), added.
//
// Legend: B batch, T sequence length, C hidden size, m a position, a the amplitude.
//   PE[m, 2i]   = a · sin(m · base^(−2i/C))
//   PE[m, 2i+1] = a · cos(m · base^(−2i/C))
// Why a = 1/sqrt(C) by default: Vaswani et al. add the raw table (a = 1) to token embeddings
// multiplied by sqrt(C). This encoder normalises the sum at once (embedding LayerNorm), and
// LN(sqrt(C)·tok + PE) = LN(tok + PE/sqrt(C)) — so a = 1/sqrt(C) is the same balance without
// touching the tied token embeddings. With a = 1 the table (RMS 0.71) drowns BERT-initialised
// token vectors (std 0.02) and a small model stays at the unigram floor (docs/results.md).
#include <cmath>

#include "position/schemes.hpp"

namespace rf {

double sinusoidal_amplitude(double sinusoidal_scale, size_t hidden) {
    return sinusoidal_scale > 0.0 ? sinusoidal_scale : 1.0 / std::sqrt(static_cast<double>(hidden));
}

Array sinusoidal_table(size_t length, size_t hidden, double base, double amplitude) {
    Array table = Array::from_shape({length, hidden});
    Real* p = table.data();
    for (size_t m = 0; m < length; ++m)
        for (size_t d = 0; d < hidden; ++d) {
            const size_t pair = d / 2;  // 2i and 2i+1 share a frequency
            const double frequency =
                std::pow(base, -2.0 * static_cast<double>(pair) / static_cast<double>(hidden));
            const double angle = static_cast<double>(m) * frequency;
            const double value = d % 2 == 0 ? std::sin(angle) : std::cos(angle);
            p[m * hidden + d] = static_cast<Real>(amplitude * value);
        }
    return table;
}

// out = x + PE[offset … offset+T−1]   x:[B,T,C]; the table has no gradient (dx = dout).
Tensor SinusoidalPosition::embed(const Tensor& x, size_t offset) {
    const size_t T = x.dim() >= 2 ? x.size(1) : 0;
    // Keep the longest table seen; rows never change when it grows (each row depends on m only).
    if (offset + T > capacity())
        table_ = Tensor(sinusoidal_table(offset + T, hidden_, base_, amplitude_));
    return add_position_rows(x, table_, offset);
}

}  // namespace rf
