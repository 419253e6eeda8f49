// Room — ropelab: the long-range decay bound of RoPE (RoFormer §3.4.3, Fig. 2).
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

// The smallest base whose angles Δ·θ_i stay finite in double for every Δ ≤ largest_distance:
// below 1 the last pair's θ = base^(−(d−2)/d) grows past 1, and largest_distance · θ must stay
// ≤ 2^1023, half double's largest number (past it the angle is inf and the bound nan). 0 when
// d = 2 (θ_0 = 1 for every base).
double rope_decay_smallest_base(size_t dim, double largest_distance);

}  // namespace rf
