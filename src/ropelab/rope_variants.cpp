// Room — ropelab: xPos, learned frequencies and 2-D axial RoPE (see rope_variants.hpp).
//
// Legend: N rows of heads (B·H), T length, D head size, r rotary dims, h = r/2 pairs,
//         m a position, B the xPos scale base.
// xPos and 2-D RoPE only change which cos/sin rows each token gets, so they share one rotary
// op (rotate_by_angles, below, on RoPE's kernel); learned frequencies need dθ and have their own.
#include "ropelab/rope_variants.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "tensor/format.hpp"

namespace rf {

// ---- the rotary op the variants share ----------------------------------------------------------
// y = K_t x per row   x:[..., T, D] → y:[..., T, D]   angles: [T, r/2]
Tensor rotate_by_angles(const Tensor& x, RopePairing pairing, size_t D, size_t r,
                        std::shared_ptr<const RopeAngles> angles, const char* op,
                        bool broken_backward) {
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
                false);
    return make_result(std::move(y), {x}, op, [=](TensorImpl& out) {
        // dx += K_tᵀ dy (a scale a in the rows stays a)
        Array* dx = grad_of(out.node->parents[0]);
        if (!dx) return;
        if (!broken_backward)
            rope_backward(out.grad.data(), dx->data(), N, T, D, r, pairing, angles->cos.data(),
                          angles->sin.data());
        else  // rope_with_broken_backward: the forward's rotation, the classic bug
            rope_kernel(out.grad.data(), dx->data(), N, T, D, r, pairing, angles->cos.data(),
                        angles->sin.data(), true);
    });
}

// The rows of `positions` from the table (for the longest position, as rope() would use).
static std::shared_ptr<RopeAngles> gather_rows(const Tensor& x, RopeTable& given,
                                               const std::vector<size_t>& positions) {
    const RopeOptions& o = given.options();
    const size_t T = x.dim() >= 2 ? x.size(-2) : 0, h = o.rotary_dims / 2;
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
    return angles;
}

Tensor rope(const Tensor& x, RopeTable& table, const std::vector<size_t>& positions) {
    const RopeOptions& o = table.options();
    return rotate_by_angles(x, o.pairing, o.head_dim, o.rotary_dims,
                            gather_rows(x, table, positions), "rope");
}

Tensor rope_with_broken_backward(const Tensor& x, RopeTable& table, size_t offset) {
    const RopeOptions& o = table.options();
    std::vector<size_t> positions(x.dim() >= 2 ? x.size(-2) : 0);
    for (size_t t = 0; t < positions.size(); ++t) positions[t] = offset + t;
    return rotate_by_angles(x, o.pairing, o.head_dim, o.rotary_dims,
                            gather_rows(x, table, positions), "rope", true);
}

// ---- xPos ---------------------------------------------------------------------------------
std::vector<double> xpos_decay_bases(size_t r, double gamma) {
    std::vector<double> zeta(r / 2);
    for (size_t i = 0; i < zeta.size(); ++i)
        zeta[i] = (2.0 * static_cast<double>(i) / static_cast<double>(r) + gamma) / (1.0 + gamma);
    return zeta;
}

// y = ζ_i^(direction·m/B) · R_m x   x:[..., T, D]; the decay is folded into the cos/sin rows
Tensor xpos(const Tensor& x, RopeTable& given, double gamma, double scale_base, int direction,
            size_t offset) {
    const RopeOptions& o = given.options();
    const size_t T = x.dim() >= 2 ? x.size(-2) : 0, h = o.rotary_dims / 2;
    RopeTable& table = given.for_length(offset + T);  // a scaling applies as in rope()
    table.reserve(offset + T);
    const std::vector<double> zeta = xpos_decay_bases(o.rotary_dims, gamma);
    auto angles = std::make_shared<RopeAngles>();
    angles->cos.resize(T * h);
    angles->sin.resize(T * h);
    for (size_t t = 0; t < T; ++t) {
        const double m = static_cast<double>(offset + t);
        for (size_t i = 0; i < h; ++i) {
            const double decay = std::pow(zeta[i], direction * m / scale_base);
            angles->cos[t * h + i] = static_cast<Real>(decay * table.cos_row(offset + t)[i]);
            angles->sin[t * h + i] = static_cast<Real>(decay * table.sin_row(offset + t)[i]);
        }
    }
    return rotate_by_angles(x, o.pairing, o.head_dim, o.rotary_dims, angles, "xpos");
}

XposPosition::XposPosition(const RopeOptions& options, double gamma, double scale_base)
    : table_(options), gamma_(gamma), scale_base_(scale_base) {}

void XposPosition::rotate(Tensor& q, Tensor& k, Tensor& v, size_t offset) {
    q = xpos(q, table_, gamma_, scale_base_, +1, offset);
    k = xpos(k, table_, gamma_, scale_base_, -1, offset);
}

// ---- learned frequencies ------------------------------------------------------------------
// y = R_m(θ) x   x:[..., T, D], θ:[h]; angles m_t·θ_i in double, cos/sin rounded once.
Tensor rope_learned_frequencies(const Tensor& x, const Tensor& theta, const RopeOptions& o,
                                size_t offset) {
    const size_t D = o.head_dim, r = o.rotary_dims, h = r / 2;
    if (x.dim() < 2 || x.size(-1) != D || theta.dim() != 1 || theta.size(0) != h)
        throw std::invalid_argument("rope_learned_frequencies: x " + shape_str(x.shape()) +
                                    " must be [..., T, " + std::to_string(D) + "] and θ " +
                                    shape_str(theta.shape()) + " must be [" + std::to_string(h) +
                                    "]");
    const size_t T = x.size(-2), N = T == 0 ? 0 : x.numel() / (T * D);
    const double divisor = rope_frequencies(o).position_divisor;  // only θ_i are learned
    std::vector<double> position(T);
    for (size_t t = 0; t < T; ++t) position[t] = static_cast<double>(offset + t) / divisor;
    auto angles = std::make_shared<RopeAngles>();
    angles->cos.resize(T * h);
    angles->sin.resize(T * h);
    for (size_t t = 0; t < T; ++t)
        for (size_t i = 0; i < h; ++i) {
            const double angle = position[t] * static_cast<double>(theta.data()[i]);
            angles->cos[t * h + i] = static_cast<Real>(std::cos(angle));
            angles->sin[t * h + i] = static_cast<Real>(std::sin(angle));
        }
    Array y = Array::from_shape(x.value().shape());
    rope_kernel(x.data(), y.data(), N, T, D, r, o.pairing, angles->cos.data(), angles->sin.data(),
                false);
    const RopePairing pairing = o.pairing;
    return make_result(std::move(y), {x, theta}, "rope_learned_frequencies", [=](TensorImpl& out) {
        // dx += R_mᵀ dy: RoPE's backward (rope.cpp's rope_backward), with this row's angles
        if (Array* dx = grad_of(out.node->parents[0]))
            rope_backward(out.grad.data(), dx->data(), N, T, D, r, pairing, angles->cos.data(),
                          angles->sin.data());
        // The pair (y_lo, y_hi) turns with its angle φ = m·θ_i: dy_lo/dφ = −y_hi,
        // dy_hi/dφ = y_lo, so dφ = y_lo·dy_hi − y_hi·dy_lo and dθ_i += Σ m_t·dφ.
        if (Array* dtheta = grad_of(out.node->parents[1])) {
            const size_t step = pairing == RopePairing::interleaved ? 2 : 1;
            const size_t gap = pairing == RopePairing::interleaved ? 1 : h;
            std::vector<double> sum(h, 0.0);
            for (size_t n = 0; n < N; ++n)
                for (size_t t = 0; t < T; ++t) {
                    const Real* yr = out.data.data() + (n * T + t) * D;
                    const Real* gr = out.grad.data() + (n * T + t) * D;
                    for (size_t i = 0; i < h; ++i) {
                        const size_t lo = i * step, hi = lo + gap;
                        sum[i] += position[t] * (static_cast<double>(yr[lo]) * gr[hi] -
                                                 static_cast<double>(yr[hi]) * gr[lo]);
                    }
                }
            for (size_t i = 0; i < h; ++i) dtheta->data()[i] += static_cast<Real>(sum[i]);
        }
    });
}

// θ starts at the table's frequencies (options validated at config load; asserted by RopeTable)
LearnedFrequencyRope::LearnedFrequencyRope(const RopeOptions& options) : options_(options) {
    const std::vector<double> theta = RopeTable(options_).frequencies();
    Array w = Array::from_shape({theta.size()});
    for (size_t i = 0; i < theta.size(); ++i) w.data()[i] = static_cast<Real>(theta[i]);
    theta_ = Tensor(std::move(w), true);
    theta_.set_name("roformer.embeddings.rotary_frequencies");
}

void LearnedFrequencyRope::rotate(Tensor& q, Tensor& k, Tensor& v, size_t offset) {
    q = rope_learned_frequencies(q, theta_, options_, offset);
    k = rope_learned_frequencies(k, theta_, options_, offset);
}

// ---- 2-D axial RoPE -----------------------------------------------------------------------
RopeOptions rope_2d_axis_options(const RopeOptions& options) {
    if (options.rotary_dims % 4 != 0 || options.rotary_dims == 0)
        throw std::invalid_argument(
            "2-D RoPE: rotary dims r = " + std::to_string(options.rotary_dims) +
            " must be a multiple of 4 (half the pairs per axis); fix "
            "position.rotary_fraction or the head size");
    RopeOptions axis = options;
    axis.rotary_dims = options.rotary_dims / 2;
    return axis;
}

// y = K x, pairs 0 … h/2−1 turned by row·φ_j, pairs h/2 … h−1 by col·φ_j   x:[..., T, D]
Tensor rope_2d(const Tensor& x, RopeTable& axis_table, const std::vector<size_t>& rows,
               const std::vector<size_t>& cols) {
    const RopeOptions& axis = axis_table.options();
    const size_t T = x.dim() >= 2 ? x.size(-2) : 0, quarter = axis.rotary_dims / 2, h = 2 * quarter;
    if (rows.size() != T || cols.size() != T)
        throw std::invalid_argument("rope_2d: " + std::to_string(rows.size()) + " rows and " +
                                    std::to_string(cols.size()) +
                                    " columns for a sequence of length T = " + std::to_string(T));
    size_t longest = 0;
    for (size_t t = 0; t < T; ++t) longest = std::max({longest, rows[t] + 1, cols[t] + 1});
    axis_table.reserve(longest);
    auto angles = std::make_shared<RopeAngles>();
    angles->cos.resize(T * h);
    angles->sin.resize(T * h);
    for (size_t t = 0; t < T; ++t) {
        angles->set_from(axis_table, rows[t], t, h, 0, quarter);        // pairs by the row
        angles->set_from(axis_table, cols[t], t, h, quarter, quarter);  // pairs by the column
    }
    return rotate_by_angles(x, axis.pairing, axis.head_dim, h * 2, angles, "rope_2d");
}

}  // namespace rf
