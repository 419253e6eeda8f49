// Stage 4 — position: rotary position embedding (RoPE, Su et al. 2021) as one differentiable op.
//
// Legend: B batch, H heads, T sequence length, D head size, r rotary dims (the first r of D,
//         even), m a position, θ_i = base^(−2i/r) for i = 0 … r/2−1.
//
// R_m is block-diagonal: r/2 independent 2-D rotations by the angles m·θ_i, one per pair of
// dims, identity on dims r … D−1. Which dims form a pair is the `pairing`:
//   interleaved  pair i = (2i, 2i+1)       the paper, GPT-J, Meta LLaMA, ggml NORMAL
//   half         pair i = (i, i + r/2)     GPT-NeoX rotate_half, HF LLaMA, ggml NEOX
// The two are the same rotation up to a fixed permutation of the head dims (docs/rope.md).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "position/position.hpp"  // PositionConfig, RopePairing
#include "tensor/tensor.hpp"

namespace rf {

// RopePairing (interleaved | half) is declared with PositionConfig in position.hpp.
// "interleaved" | "half" → enum; anything else throws naming position.pairing.
RopePairing parse_rope_pairing(const std::string& name);
const char* rope_pairing_name(RopePairing pairing);

struct RopeOptions {
    RopePairing pairing = RopePairing::interleaved;
    size_t head_dim = 0;                // D
    size_t rotary_dims = 0;             // r: even, 2 ≤ r ≤ D; dims r … D−1 pass through
    double base = 10000.0;              // θ_i = base^(−2i/r)
    double interpolation_factor = 1.0;  // position interpolation: angle uses m / factor
    double ntk_factor = 1.0;            // NTK-aware scaling: base → base · factor^(r/(r−2))
    // Scaling a trained model (position.scaling and its knobs; rope_scaling.hpp):
    RopeScaling scaling = RopeScaling::none;
    double scaling_factor = 1.0;        // s
    size_t original_max_positions = 0;  // L₀
    double yarn_beta_fast = 32.0, yarn_beta_slow = 1.0;
    double yarn_attention_factor = 0.0;  // 0 = 0.1·ln(s) + 1
    double low_freq_factor = 1.0, high_freq_factor = 4.0;
    // dynamic_ntk: the length L this table is made for (0 = L₀ or shorter: no scaling).
    size_t dynamic_length = 0;
};

// The rules for RoPE's knobs, each written once; messages name the position.* key.
// base > 0 and finite, interpolation_factor > 0, ntk_factor > 0 (also used by sinusoidal's base).
void validate_rope_knobs(double base, double interpolation_factor, double ntk_factor);
// Everything a RopeTable needs: the knobs above, D even, r even in [2, D], NTK needs r ≥ 4.
void validate_rope_options(const RopeOptions& options);

// r = rotary_fraction · D, rounded; validate_position_config guarantees it is exact and even.
size_t rope_rotary_dims(double rotary_fraction, size_t head_dim);
RopeOptions rope_options_from_config(const PositionConfig& config, size_t head_dim);

// base · ntk^(r/(r−2)), exactly `base` when ntk = 1 (ntk = ntk_factor, times s for
// scaling = ntk; dynamic_ntk's base for dynamic_length: rope_scaling.hpp).
double rope_effective_base(const RopeOptions& options);
// θ_i = effective_base^(−2i/r), i = 0 … r/2−1, in double; then reshaped per frequency by
// scaling = yarn or llama3 (rope_scaling.hpp).
std::vector<double> rope_frequencies(const RopeOptions& options);
// The divisor of m: interpolation_factor, times s for scaling = linear.
double rope_position_divisor(const RopeOptions& options);

// The angle table: row m holds a·cos and a·sin of (m / divisor)·θ_i for i < r/2, where a is
// the attention factor (1 but for yarn, whose temperature scales q and k and so q·k by a²:
// folded into the table, the composed op and the fused kernel apply it alike).
// Angles are computed in double and only the final cos/sin are rounded to Real (a float
// product m·θ_i loses ~1e-3 rad at m = 100 000; see tests/test_rope.cpp "precision").
// The table keeps every row it has computed: reserve(n) appends rows up to n and never
// recomputes or drops old ones, so a row's values never depend on the lengths seen.
class RopeTable {
public:
    explicit RopeTable(RopeOptions options);  // throws std::invalid_argument on bad options

    const RopeOptions& options() const { return options_; }
    const std::vector<double>& frequencies() const { return theta_; }
    size_t capacity() const { return capacity_; }  // rows computed = longest length seen
    size_t half() const { return options_.rotary_dims / 2; }

    void reserve(size_t length);  // ensure rows 0 … length−1 exist
    // The table to rotate a sequence of `length` positions with: *this, except for
    // scaling = dynamic_ntk past L₀, where it is a table whose base is grown for that length
    // (kept until a different length is asked for).
    RopeTable& for_length(size_t length);
    const Real* cos_row(size_t m) const { return cos_.data() + m * half(); }  // [r/2]
    const Real* sin_row(size_t m) const { return sin_.data() + m * half(); }  // [r/2]

private:
    RopeOptions options_;
    std::vector<double> theta_;    // [r/2]
    std::vector<Real> cos_, sin_;  // [capacity, r/2]
    size_t capacity_ = 0;
    double amplitude_ = 1.0;              // the attention factor a
    std::shared_ptr<RopeTable> dynamic_;  // dynamic_ntk: the table of the last length > L₀
};

// The kernel, forward and backward in one: for every row (n, t)
//   sin_sign = +1:  y = R_m x      (forward)
//   sin_sign = −1:  y = R_mᵀ x = R_{−m} x   (backward: R is orthogonal, dL/dx = R_mᵀ dL/dy)
// in, out: [N, T, D] contiguous (N = B·H; in == out is allowed when !accumulate);
// cos, sin: [T, r/2], row t = the angles of the position used at t.
// accumulate: out += y (gradients) instead of out = y. Parallel over N with OpenMP; each
// row is written by one thread only, so the result is deterministic.
void rope_kernel(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                 RopePairing pairing, const Real* cos, const Real* sin, Real sin_sign,
                 bool accumulate);

// The backward of the op: dx += R_mᵀ dy for every row (n, t), with the forward's cos/sin
// table. dy, dx: [N, T, D]. R_m is a rotation, so R_mᵀ = R_m⁻¹ = R_{−m} (rope_backward.cpp).
void rope_backward(const Real* dy, Real* dx, size_t N, size_t T, size_t D, size_t r,
                   RopePairing pairing, const Real* cos, const Real* sin);

// cos/sin rows gathered for the positions of one call, [T, r/2] each, any per-row scale
// folded in (yarn's attention factor, xPos's decay). The backward keeps them: later table
// growth (which may move the table's storage) cannot affect it.
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

// The op every rotary variant shares: y[..., t, :] = K_t x[..., t, :] with K_t the pairs'
// 2×2 blocks [c −s; s c] from row t of `angles` (a scaled rotation a·R when the rows carry a
// scale a), identity on dims r … D−1. Backward: dx += K_tᵀ dy (the kernel, sin sign −1).
// x:[..., T, D]; `op` names the graph node ("rope", "xpos", "rope_2d").
Tensor rotate_by_angles(const Tensor& x, RopePairing pairing, size_t D, size_t r,
                        std::shared_ptr<const RopeAngles> angles, const char* op = "rope",
                        Real backward_sin_sign = Real(-1));

// x:[..., T, D] → y:[..., T, D] with y[..., t, :] = R_{offset+t} x[..., t, :].
// Grows the table when offset + T exceeds it. Backward: dx += R_mᵀ dy (same kernel, sign −1).
Tensor rope(const Tensor& x, RopeTable& table, size_t offset = 0);
// Same with explicit position ids, positions.size() == T, shared by all leading dims.
Tensor rope(const Tensor& x, RopeTable& table, const std::vector<size_t>& positions);

// The hook for `roformer gradcheck --break-sin-sign` (a classroom demo, never used in a
// model): the same forward, but a backward that calls the kernel with the forward's sign +1
// instead of −1 (dx += R_m dy instead of R_mᵀ dy) — the classic RoPE backward bug.
Tensor rope_with_broken_backward(const Tensor& x, RopeTable& table, size_t offset = 0);

}  // namespace rf
