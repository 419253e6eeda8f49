// Stage 4 — position: the RoPE angle table, the raw-loop kernel and the differentiable op.
//
// Legend: N = B·H rows of heads, T sequence length, D head size, r rotary dims, h = r/2 pairs.
#include "position/rope.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "position/rope_scaling.hpp"
#include "tensor/format.hpp"

namespace rf {

// ---- the frequencies and the angle table ------------------------------------------------
RopeFrequencies rope_frequencies(const RopeOptions& o, size_t length) {
    RopeFrequencies f;
    f.base = scaled_rope_base(o, length);  // o.base unless an NTK scaling grows it
    const double r = static_cast<double>(o.rotary_dims);
    f.theta.resize(o.rotary_dims / 2);
    for (size_t i = 0; i < f.theta.size(); ++i)
        f.theta[i] = std::pow(f.base, -2.0 * static_cast<double>(i) / r);
    rescale_rope_frequencies(o, f);  // divisor, per-pair θ_i, a: rope_scaling.cpp
    // p-RoPE: the slowest pairs stop turning (θ_i = 0: cos 1, sin 0, the identity), after any
    // scaling, so a scaled p-RoPE model rescales only the pairs it rotates. p = 1 changes nothing.
    for (size_t i = rope_p_rotated_pairs(o.rope_p, f.theta.size()); i < f.theta.size(); ++i)
        f.theta[i] = 0.0;
    return f;
}

RopeTable::RopeTable(RopeOptions options, size_t length) : options_(options), length_(length) {
    const size_t D = options_.head_dim, r = options_.rotary_dims;
    if (D % 2 != 0 || r < 2 || r % 2 != 0 || r > D)  // validate_rope_options ran at config load
        throw std::logic_error("internal: RopeTable options not validated (validate_rope_options)");
    freq_ = rope_frequencies(options_, length_);
}

void RopeTable::reserve(size_t length) {
    if (length <= capacity_) return;
    const size_t h = half();
    cos_.resize(length * h);
    sin_.resize(length * h);
    for (size_t m = capacity_; m < length; ++m) {
        // The angle in double: (m / divisor)·θ_i. Only a·cos, a·sin are rounded to Real.
        const double position = static_cast<double>(m) / freq_.position_divisor;
        for (size_t i = 0; i < h; ++i) {
            const double angle = position * freq_.theta[i];
            cos_[m * h + i] = static_cast<Real>(freq_.amplitude * std::cos(angle));
            sin_[m * h + i] = static_cast<Real>(freq_.amplitude * std::sin(angle));
        }
    }
    capacity_ = length;
}

// ---- the op (the kernel: rope_kernel.cpp forward, rope_backward.cpp backward) -------------
static void check_head(const Tensor& x, size_t D, const char* op) {  // x:[..., T, D]
    if (x.dim() < 2 || x.size(-1) != D)
        throw std::invalid_argument(std::string(op) + ": x has shape " + shape_str(x.shape()) +
                                    " but the table is for [..., T, " + std::to_string(D) +
                                    "] (head size D)");
}

// y = K_t x per row   x:[..., T, D] → y:[..., T, D]   angles: [T, r/2]
Tensor rotate_by_angles(const Tensor& x, RopePairing pairing, size_t D, size_t r,
                        std::shared_ptr<const RopeAngles> angles, const char* op,
                        Real backward_sin_sign) {
    check_head(x, D, op);
    const size_t T = x.size(-2), h = r / 2;
    if (angles->cos.size() != T * h)
        throw std::invalid_argument(std::string(op) + ": " + std::to_string(angles->cos.size()) +
                                    " angles for a sequence of length T = " + std::to_string(T) +
                                    " with r/2 = " + std::to_string(h) + " pairs in x " +
                                    shape_str(x.shape()));
    const size_t N = T == 0 ? 0 : x.numel() / (T * D);
    Array y = Array::from_shape(x.value().shape());
    rope_kernel(x.data(), y.data(), N, T, D, r, pairing, angles->cos.data(), angles->sin.data(),
                Real(1), false);
    return make_result(std::move(y), {x}, op, [=](TensorImpl& out) {
        // dx += K_tᵀ dy   dy, dx:[..., T, D]   (sin sign −1, rope_backward.cpp; a scale a in
        // the rows stays a)
        Array* dx = grad_of(out.node->parents[0]);
        if (!dx) return;
        if (backward_sin_sign < 0)
            rope_backward(out.grad.data(), dx->data(), N, T, D, r, pairing, angles->cos.data(),
                          angles->sin.data());
        else  // rope_with_broken_backward: the forward's rotation, the classic bug
            rope_kernel(out.grad.data(), dx->data(), N, T, D, r, pairing, angles->cos.data(),
                        angles->sin.data(), Real(1), true);
    });
}

// y = R_m x per row, m = positions[t]   x:[..., T, D] → y:[..., T, D]
// backward_sin_sign is −1 for the real op; +1 only for rope_with_broken_backward.
static Tensor rope_op(const Tensor& x, RopeTable& given, const std::vector<size_t>& positions,
                      Real backward_sin_sign) {
    const RopeOptions& o = given.options();
    check_head(x, o.head_dim, "rope");
    const size_t T = x.size(-2), h = o.rotary_dims / 2;
    if (positions.size() != T)
        throw std::invalid_argument("rope: " + std::to_string(positions.size()) +
                                    " position ids for a sequence of length T = " +
                                    std::to_string(T) + " in x " + shape_str(x.shape()));
    size_t longest = 0;
    for (size_t p : positions) longest = std::max(longest, p + 1);
    RopeTable& table = given.for_length(longest);  // dynamic_ntk: the base for this length
    table.reserve(longest);
    auto angles = std::make_shared<RopeAngles>();
    angles->cos.resize(T * h);
    angles->sin.resize(T * h);
    for (size_t t = 0; t < T; ++t) angles->set_from(table, positions[t], t, h, 0, h);
    return rotate_by_angles(x, o.pairing, o.head_dim, o.rotary_dims, angles, "rope",
                            backward_sin_sign);
}

static std::vector<size_t> consecutive_positions(const Tensor& x, size_t offset) {
    std::vector<size_t> positions(x.dim() >= 2 ? x.size(-2) : 0);
    for (size_t t = 0; t < positions.size(); ++t) positions[t] = offset + t;
    return positions;
}

Tensor rope(const Tensor& x, RopeTable& table, size_t offset) {
    return rope_op(x, table, consecutive_positions(x, offset), Real(-1));
}

Tensor rope(const Tensor& x, RopeTable& table, const std::vector<size_t>& positions) {
    return rope_op(x, table, positions, Real(-1));
}

Tensor rope_with_broken_backward(const Tensor& x, RopeTable& table, size_t offset) {
    return rope_op(x, table, consecutive_positions(x, offset), Real(+1));
}

}  // namespace rf
