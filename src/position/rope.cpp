// Stage 4 — position: the RoPE angle table, the raw-loop kernel and the differentiable op.
//
// Legend: N = B·H rows of heads, T sequence length, D head size, r rotary dims, h = r/2 pairs.
#include "position/rope.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "position/position.hpp"
#include "position/rope_scaling.hpp"
#include "tensor/format.hpp"

namespace rf {

RopePairing parse_rope_pairing(const std::string& name) {
    return parse_enum<RopePairing>(name, "position.pairing");
}

const char* rope_pairing_name(RopePairing pairing) { return enum_name(pairing); }

size_t rope_rotary_dims(double rotary_fraction, size_t head_dim) {
    return static_cast<size_t>(std::llround(rotary_fraction * static_cast<double>(head_dim)));
}

RopeOptions rope_options_from_config(const PositionConfig& config, size_t head_dim) {
    RopeOptions o;
    o.pairing = config.pairing;
    o.head_dim = head_dim;
    o.rotary_dims = rope_rotary_dims(config.rotary_fraction, head_dim);
    o.base = config.base;
    o.interpolation_factor = config.interpolation_factor;
    o.ntk_factor = config.ntk_factor;
    o.scaling = config.scaling;
    o.scaling_factor = config.scaling_factor;
    o.original_max_positions = config.original_max_positions;
    o.yarn_beta_fast = config.yarn_beta_fast;
    o.yarn_beta_slow = config.yarn_beta_slow;
    o.yarn_attention_factor = config.yarn_attention_factor;
    o.low_freq_factor = config.low_freq_factor;
    o.high_freq_factor = config.high_freq_factor;
    return o;
}

double rope_effective_base(const RopeOptions& o) {
    if (o.scaling == RopeScaling::dynamic_ntk) return dynamic_ntk_base(o);
    const double ntk = o.ntk_factor * (o.scaling == RopeScaling::ntk ? o.scaling_factor : 1.0);
    if (ntk == 1.0) return o.base;
    const double r = static_cast<double>(o.rotary_dims);
    return o.base * std::pow(ntk, r / (r - 2.0));
}

double rope_position_divisor(const RopeOptions& o) {
    return o.interpolation_factor * (o.scaling == RopeScaling::linear ? o.scaling_factor : 1.0);
}

std::vector<double> rope_frequencies(const RopeOptions& o) {
    const double base = rope_effective_base(o);
    const double r = static_cast<double>(o.rotary_dims);
    std::vector<double> theta(o.rotary_dims / 2);
    for (size_t i = 0; i < theta.size(); ++i)
        theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / r);
    return rescale_frequencies(o, std::move(theta));
}

// ---- the rules for RoPE's knobs, written once ------------------------------------------
void validate_rope_knobs(double base, double interpolation_factor, double ntk_factor) {
    if (!(base > 0.0))
        throw std::invalid_argument("position.base = " + format_printf("%g", base) +
                                    " must be > 0 (the paper uses 10000)");
    if (!(interpolation_factor > 0.0))
        throw std::invalid_argument(
            "position.interpolation_factor = " + format_printf("%g", interpolation_factor) +
            " must be > 0 (1 = no interpolation, 2 = squeeze twice the "
            "trained length)");
    if (!(ntk_factor > 0.0))
        throw std::invalid_argument("position.ntk_factor = " + format_printf("%g", ntk_factor) +
                                    " must be > 0 (1 = no base scaling)");
}

void validate_rope_options(const RopeOptions& o) {
    const std::string D = std::to_string(o.head_dim), r = std::to_string(o.rotary_dims);
    if (o.head_dim == 0 || o.head_dim % 2 != 0)
        throw std::invalid_argument(
            "position.scheme = rope needs an even head size, got D = " + D +
            "; choose model.hidden and model.num_heads with an even quotient");
    if (o.rotary_dims < 2 || o.rotary_dims % 2 != 0 || o.rotary_dims > o.head_dim)
        throw std::invalid_argument("RoPE rotary dims r = " + r + " must be even and in [2, " + D +
                                    "]; fix position.rotary_fraction");
    validate_rope_knobs(o.base, o.interpolation_factor, o.ntk_factor);
    if (o.ntk_factor != 1.0 && o.rotary_dims == 2)
        throw std::invalid_argument("position.ntk_factor = " + format_printf("%g", o.ntk_factor) +
                                    " needs at least 4 rotary dims (base·factor^(r/(r-2)) is "
                                    "undefined for r = 2); raise position.rotary_fraction or set "
                                    "position.ntk_factor = 1");
    validate_rope_scaling(o);
}

// ---- the angle table ----------------------------------------------------------------------
RopeTable::RopeTable(RopeOptions options) : options_(options) {
    validate_rope_options(options_);
    theta_ = rope_frequencies(options_);
    amplitude_ = rope_attention_factor(options_);
}

RopeTable& RopeTable::for_length(size_t length) {
    if (options_.scaling != RopeScaling::dynamic_ntk || options_.dynamic_length != 0 ||
        length <= options_.original_max_positions)
        return *this;
    if (!dynamic_ || dynamic_->options().dynamic_length != length) {
        RopeOptions grown = options_;
        grown.dynamic_length = length;
        dynamic_ = std::make_shared<RopeTable>(grown);
    }
    return *dynamic_;
}

void RopeTable::reserve(size_t length) {
    if (length <= capacity_) return;
    const size_t h = half();
    cos_.resize(length * h);
    sin_.resize(length * h);
    for (size_t m = capacity_; m < length; ++m) {
        // The angle in double: (m / divisor)·θ_i. Only a·cos, a·sin are rounded to Real.
        const double position = static_cast<double>(m) / rope_position_divisor(options_);
        for (size_t i = 0; i < h; ++i) {
            const double angle = position * theta_[i];
            cos_[m * h + i] = static_cast<Real>(amplitude_ * std::cos(angle));
            sin_[m * h + i] = static_cast<Real>(amplitude_ * std::sin(angle));
        }
    }
    capacity_ = length;
}

// ---- the kernel: rope_kernel.cpp (forward) and rope_backward.cpp (backward) ----------

// ---- the op -----------------------------------------------------------------------------
static std::vector<size_t> consecutive_positions(const Tensor& x, size_t offset) {
    const size_t T = x.dim() >= 2 ? x.size(-2) : 0;
    std::vector<size_t> positions(T);
    for (size_t t = 0; t < T; ++t) positions[t] = offset + t;
    return positions;
}

// backward_sin_sign is −1 for the real op; +1 only for rope_with_broken_backward.
static Tensor rope_op(const Tensor& x, RopeTable& table, const std::vector<size_t>& positions,
                      Real backward_sin_sign);

Tensor rope(const Tensor& x, RopeTable& table, size_t offset) {
    return rope_op(x, table, consecutive_positions(x, offset), Real(-1));
}

Tensor rope(const Tensor& x, RopeTable& table, const std::vector<size_t>& positions) {
    return rope_op(x, table, positions, Real(-1));
}

Tensor rope_with_broken_backward(const Tensor& x, RopeTable& table, size_t offset) {
    return rope_op(x, table, consecutive_positions(x, offset), Real(+1));
}

// y = K_t x per row   x:[..., T, D] → y:[..., T, D]   angles: [T, r/2]
Tensor rotate_by_angles(const Tensor& x, RopePairing pairing, size_t D, size_t r,
                        std::shared_ptr<const RopeAngles> angles, const char* op,
                        Real backward_sin_sign) {
    if (x.dim() < 2 || x.size(-1) != D)
        throw std::invalid_argument(std::string(op) + ": x has shape " + shape_str(x.shape()) +
                                    " but the table is for [..., T, " + std::to_string(D) +
                                    "] (head size D)");
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

// y = R_m x per row   x:[..., T, D] → y:[..., T, D]
static Tensor rope_op(const Tensor& x, RopeTable& given, const std::vector<size_t>& positions,
                      Real backward_sin_sign) {
    const RopeOptions& o = given.options();
    if (x.dim() < 2 || x.size(-1) != o.head_dim)
        throw std::invalid_argument("rope: x has shape " + shape_str(x.shape()) +
                                    " but the table is for [..., T, " + std::to_string(o.head_dim) +
                                    "] (head size D)");
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

}  // namespace rf
