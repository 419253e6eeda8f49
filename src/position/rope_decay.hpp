// Stage 4 — position: the long-range decay bound of RoPE (RoFormer §3.4.3, Fig. 2).
//
// Legend: d head size (even), θ_i = base^(−2i/d) for i = 0 … d/2−1, Δ = m − n a distance.
// With S_j = Σ_{i=0}^{j−1} e^{i·Δ·θ_i} (the first j pairs), the paper bounds
// |⟨R_m q, R_n k⟩| by (max_i |h_{i+1} − h_i|) · Σ_j |S_j|; the relative factor it plots is
//     bound(Δ) = (1 / (d/2)) · Σ_{j=1}^{d/2} |S_j|,
// which is (d/2 + 1)/2 at Δ = 0 and falls, with ripples, as Δ grows.
#pragma once

#include <cstddef>

namespace rf {

double rope_decay_bound(size_t dim, double base, double distance);

}  // namespace rf
