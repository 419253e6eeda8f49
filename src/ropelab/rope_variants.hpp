// Room — ropelab: RoPE variants that sit in the graph — xPos, learned frequencies, 2-D.
//
// Legend: B batch, H heads, T length, D head size, r rotary dims, h = r/2 pairs, m, n
//         positions of a query and a key, θ_i = base^(−2i/r).
//
// xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer"): RoPE times a per-pair decay
//   q'_m = ζ_i^(+m/B) · R_m q      k'_n = ζ_i^(−n/B) · R_n k      ζ_i = (2i/r + γ)/(1 + γ)
//   so pair i of q'_m·k'_n = ζ_i^((m−n)/B) · (its RoPE term): still a function of m − n, and
//   shrinking as the key lies further back (m > n) — which is why xPos is for causal models:
//   in a bidirectional one the keys ahead (n > m) would be amplified instead.
//   B = position.xpos_scale_base, γ = position.xpos_gamma.
//
// Learned frequencies: θ:[h] a parameter (initialised at base^(−2i/r)); y = R_m(θ) x with the
//   angles m·θ_i in the graph, so training moves the frequencies themselves.
//
// 2-D (axial) RoPE, for a token at grid cell (row, col): pairs 0 … h/2−1 turn by row·φ_j,
//   pairs h/2 … h−1 by col·φ_j, φ_j = base^(−4j/r) (each axis a RoPE of r/2 dims), so a
//   query·key score depends on (Δrow, Δcol) only. r must be a multiple of 4.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "position/position.hpp"
#include "position/rope.hpp"

namespace rf {

// ---- the rotary op the variants share ----------------------------------------------------------
// cos/sin rows gathered for the positions of one call, [T, r/2] each, any per-row scale
// folded in (YaRN's a, xPos's decay). The backward keeps them: later table growth (which
// may move the table's storage) cannot affect it.
struct RopeAngles {
    std::vector<Real> cos, sin;
    // Copies `count` pairs of `table`'s row `position` into this call's row t, from pair
    // `first` on (rows of r/2 = pairs_per_row pairs): the gather every variant does.
    void set_from(const RopeTable& table, size_t position, size_t t, size_t pairs_per_row,
                  size_t first, size_t count) {
        for (size_t i = 0; i < count; ++i) {
            cos[t * pairs_per_row + first + i] = table.cos_row(position)[i];
            sin[t * pairs_per_row + first + i] = table.sin_row(position)[i];
        }
    }
};

// y[..., t, :] = K_t x[..., t, :] with K_t the pairs' 2×2 blocks [c −s; s c] from row t of
// `angles` (a scaled rotation a·R when the rows carry a scale a), identity on dims r … D−1.
// Backward: dx += K_tᵀ dy (rope_backward). x:[..., T, D]; `op` names the graph node ("xpos",
// "rope_2d", …). broken_backward only for rope_with_broken_backward: dx += K_t dy, the
// forward's rotation.
Tensor rotate_by_angles(const Tensor& x, RopePairing pairing, size_t D, size_t r,
                        std::shared_ptr<const RopeAngles> angles, const char* op,
                        bool broken_backward = false);

// rope() with explicit position ids, positions.size() == T, shared by all leading dims:
// y[..., t, :] = R_{positions[t]} x[..., t, :].
Tensor rope(const Tensor& x, RopeTable& table, const std::vector<size_t>& positions);

// The hook for `roformer gradcheck --break-sin-sign` (a classroom demo, never used in a
// model): rope()'s forward, but a backward that calls the kernel with the forward's sign +1
// instead of −1 (dx += R_m dy instead of R_mᵀ dy) — the classic RoPE backward bug.
Tensor rope_with_broken_backward(const Tensor& x, RopeTable& table, size_t offset = 0);

// ---- xPos ---------------------------------------------------------------------------------
// ζ_i = (2i/r + γ)/(1 + γ), i = 0 … r/2 − 1 (the fastest pair decays most).
std::vector<double> xpos_decay_bases(size_t rotary_dims, double gamma);
// x:[..., T, D] → y[..., t, :] = ζ_i^(direction·m/B) R_m x[..., t, :], m = offset + t;
// direction +1 for queries, −1 for keys. Backward: dx += ζ^(…) R_mᵀ dy (the same scaled rows).
Tensor xpos(const Tensor& x, RopeTable& table, double gamma, double scale_base, int direction,
            size_t offset = 0);

// ---- learned frequencies ------------------------------------------------------------------
// y[..., t, :] = R_m(θ) x[..., t, :], angle m_t·θ_i, m_t = (offset + t)/interpolation_factor
//   x:[..., T, D]  θ:[r/2] (pairing, D, r from `options`)
// Backward: dx += R_mᵀ dy;  dθ_i += Σ_rows m_t·(y_lo·dy_hi − y_hi·dy_lo)  (dy/dφ = J·y).
Tensor rope_learned_frequencies(const Tensor& x, const Tensor& theta, const RopeOptions& options,
                                size_t offset = 0);

// ---- 2-D axial RoPE -----------------------------------------------------------------------
// The per-axis options: the same pairing, D and base, r/2 rotary dims (so φ_j = base^(−4j/r)).
// Throws std::invalid_argument unless r is a multiple of 4.
RopeOptions rope_2d_axis_options(const RopeOptions& options);
// x:[..., T, D], rows/cols: the grid cell of each of the T tokens; axis_table made from
// rope_2d_axis_options. Backward: dx += Kᵀ dy (the rotation's transpose).
Tensor rope_2d(const Tensor& x, RopeTable& axis_table, const std::vector<size_t>& rows,
               const std::vector<size_t>& cols);

// ---- the schemes (position.xpos, position.learned_frequencies) ------------------------------
class XposPosition : public PositionScheme {
public:
    XposPosition(const RopeOptions& options, double gamma, double scale_base);
    std::string name() const override { return "xpos"; }
    // q ← xpos(q, +1), k ← xpos(k, −1)
    void rotate(Tensor& q, Tensor& k, Tensor& v, size_t offset = 0) override;
    // The fused kernel rotates without a decay: the composed ops run.
    bool rotation_only(RopeTable** table) override {
        *table = nullptr;
        return false;
    }
    RopeTable& table() { return table_; }

private:
    RopeTable table_;
    double gamma_, scale_base_;
};

class LearnedFrequencyRope : public PositionScheme {
public:
    // θ [r/2] initialised at base^(−2i/r), named "roformer.embeddings.rotary_frequencies".
    explicit LearnedFrequencyRope(const RopeOptions& options);
    std::string name() const override { return "rope_learned_frequencies"; }
    void rotate(Tensor& q, Tensor& k, Tensor& v, size_t offset = 0) override;
    bool rotation_only(RopeTable** table) override {  // the fused kernel's θ are fixed
        *table = nullptr;
        return false;
    }
    std::vector<Tensor> parameters() override { return {theta_}; }
    Tensor& frequencies() { return theta_; }

private:
    RopeOptions options_;
    Tensor theta_;
};

}  // namespace rf
