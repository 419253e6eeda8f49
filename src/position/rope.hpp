// Stage 4 — position: rotary position embedding (RoPE, Su et al. 2021) as one differentiable op.
//
// Legend: B batch, H heads, T sequence length, D head size, r rotary dims (the first r of D,
//         even), m a position, θ_i = base^(−2i/r) for i = 0 … r/2−1.
//
// The paper's eq. 34, one pair of dims at a time: with c = cos mθ_i, s = sin mθ_i,
//   y_lo = c·x_lo − s·x_hi          R_m is block-diagonal: r/2 independent 2-D rotations,
//   y_hi = s·x_lo + c·x_hi          identity on dims r … D−1.
// so ⟨R_m q, R_n k⟩ depends on m − n only (the relative property; docs/rope.md). Which dims
// form a pair is the `pairing`:
//   interleaved  pair i = (2i, 2i+1)       the paper, GPT-J, Meta LLaMA, ggml NORMAL
//   half         pair i = (i, i + r/2)     GPT-NeoX rotate_half, HF LLaMA, ggml NEOX
// The two are the same rotation up to a fixed permutation of the head dims.
// The call from attention: RopePosition::rotate → rope() → rope_kernel(). Scaling a trained
// model, p-RoPE and the variants xPos, learned frequencies and 2-D RoPE are the RoPE lab's
// (src/ropelab/), plugged in beside it (rope_lab_socket.hpp); none of them is needed to read
// this file.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "position/position.hpp"  // RopeConfig, RopePairing; validate_rope_options
#include "tensor/tensor.hpp"

namespace rf {

class RopeLab;

// One table's options: RoPE's [position] knobs (RopeConfig: pairing, base, scaling, …) and
// the geometry of one head. Checked once, by validate_rope_options at config load.
struct RopeOptions : RopeConfig {
    size_t head_dim = 0;     // D
    size_t rotary_dims = 0;  // r: even, 2 ≤ r ≤ D; dims r … D−1 pass through
};

// What the table turns by: row m holds a·cos and a·sin of (m / divisor)·θ_i, i < r/2.
struct RopeFrequencies {
    double base = 0;                // the base θ_i come from (NTK scalings grow it)
    std::vector<double> theta;      // θ_i [r/2]
    double position_divisor = 1.0;  // m → m / divisor (position interpolation)
    double amplitude = 1.0;         // a: YaRN's attention factor (q·k gains a²)
};
// The one place θ_i are made: θ_i = base^(−2i/r), divisor 1, a = 1 — the paper's RoPE — then
// adjusted by a scaling, interpolation or p-RoPE when one is set (the RoPE lab's,
// src/ropelab/rope_scaling.cpp). length: the sequence length (dynamic NTK only).
RopeFrequencies rope_frequencies(const RopeOptions& options, size_t length = 0);

// The angle table. Angles in double, only cos/sin rounded to Real (a float m·θ_i loses ~1e-3
// rad at m = 100 000; tests/lesson/test_rope.cpp "precision"). reserve(n) appends rows up to
// n, never recomputing or dropping old ones: a row never depends on lengths seen.
class RopeTable {
public:
    explicit RopeTable(RopeOptions options, size_t length = 0);  // options checked at load

    const RopeOptions& options() const;
    const std::vector<double>& frequencies() const { return freq_.theta; }
    double amplitude() const { return freq_.amplitude; }  // a (YaRN's; 1 for the paper's)
    size_t capacity() const { return capacity_; }  // rows computed = longest length seen
    size_t half() const;  // r/2 pairs

    void reserve(size_t length);  // ensure rows 0 … length−1 exist
    // The table for a sequence of `length` positions: this one, except under dynamic NTK past
    // L₀, where it is a table with the base grown for that length (the lab's).
    RopeTable& for_length(size_t length);
    const Real* cos_row(size_t m) const;  // [r/2]: cos mθ_i of position m
    const Real* sin_row(size_t m) const;  // [r/2]: sin mθ_i of position m

private:
    RopeOptions options_;
    const RopeLab* lab_ = nullptr;  // the RoPE lab, when the options ask for it (a scaling)
    size_t length_;                // the length given (dynamic NTK), 0 for a trained table
    RopeFrequencies freq_;
    std::vector<Real> cos_, sin_;  // [capacity, r/2]
    size_t capacity_ = 0;
    std::shared_ptr<RopeTable> for_length_;  // dynamic_ntk: the table of the last length > L₀
};

// The kernel: for every row (n, t), y = R x, R the block-diagonal rotation whose pair i turns
// by the angle whose cosine and sine are row t's entry i of the tables (for rope(): m·θ_i).
// in, out: [N, T, D] contiguous (N = B·H; in == out is allowed when !accumulate);
// cos, sin: [T, r/2], row t = the angles of the position used at t.
// accumulate: out += y (gradients) instead of out = y.
void rope_kernel(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                 RopePairing pairing, const Real* cos, const Real* sin, bool accumulate);

// The backward of the op: dx += R_mᵀ dy for every row (n, t), with the forward's cos/sin
// table. dy, dx: [N, T, D] (in rope.cpp, under the kernel).
void rope_backward(const Real* dy, Real* dx, size_t N, size_t T, size_t D, size_t r,
                   RopePairing pairing, const Real* cos, const Real* sin);

// x:[..., T, D] → y:[..., T, D] with y[..., t, :] = R_{offset+t} x[..., t, :].
// Grows the table when offset + T exceeds it. Backward: dx += R_mᵀ dy (rope_backward).
Tensor rope(const Tensor& x, RopeTable& table, size_t offset = 0);

}  // namespace rf
