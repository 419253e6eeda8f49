// Room — fast: the fast path's wider products (model.fused = true). Each computes what
// composed ops compute, in fewer, wider BLAS calls and fewer passes over memory:
//   stacked_linear         k linear layers of one input as ONE product against their weights
//                          stacked (q, k, v: [R,C]·[C,3C] instead of three [R,C]·[C,C])
//   linear_cross_entropy   cross_entropy(x·Wᵀ + b) (the tied decoder and its loss): the [R,V]
//                          logits written once, the gradient made block by block in cache
// tests/machinery/test_fused_products.cpp checks each against the composed ops; tests/gradcheck/
// test_fused_products_grad.cpp checks each backward per element in double.
//
// Legend: R rows (every leading dim), C in features, N = Σ out_i stacked out features,
//         V classes (vocabulary), n rows whose target is not ignored.
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/openmp.hpp"
#include "fast/products.hpp"
#include "fast/fused_ops.hpp"
#include "fast/xsimd_compat.hpp"
#include "ops/ops.hpp"

namespace rf {
namespace {

using Lanes = xsimd::batch<Real>;
constexpr size_t kLanes = Lanes::size;

size_t leading_rows(const Shape& shape) {
    size_t rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
    return rows;
}

// max of a row, in lanes then the tail
Real row_max(const Real* x, size_t n) {
    const size_t whole = n - n % kLanes;
    Lanes top(-std::numeric_limits<Real>::infinity());
    for (size_t j = 0; j < whole; j += kLanes) top = xsimd::max(top, Lanes::load_unaligned(x + j));
    alignas(64) Real lanes[kLanes];
    top.store_aligned(lanes);
    Real m = *std::max_element(lanes, lanes + kLanes);
    for (size_t j = whole; j < n; ++j) m = std::max(m, x[j]);
    return m;
}

// log Σ_j exp(x_j) = m + log Σ_j exp(x_j − m), m = max_j x_j; exp in lanes (xsimd), the lane
// sums in Real (every term ≤ 1), the total carried to the log in double.
double row_logsumexp(const Real* x, size_t n) {
    const Real m = row_max(x, n);
    const size_t whole = n - n % kLanes;
    Lanes acc(Real(0));
    for (size_t j = 0; j < whole; j += kLanes) acc += xsimd::exp(Lanes::load_unaligned(x + j) - m);
    double total = double(lane_sum(acc));
    for (size_t j = whole; j < n; ++j) total += double(std::exp(x[j] - m));
    return double(m) + std::log(total);
}

// g = scale·(exp(x − lse) − onehot(t))   one row of the loss gradient, x:[n] → g:[n]
void row_loss_gradient(const Real* x, Real lse, int target, Real scale, Real* g, size_t n) {
    const size_t whole = n - n % kLanes;
    for (size_t j = 0; j < whole; j += kLanes)
        (xsimd::exp(Lanes::load_unaligned(x + j) - lse) * scale).store_unaligned(g + j);
    for (size_t j = whole; j < n; ++j) g[j] = std::exp(x[j] - lse) * scale;
    g[size_t(target)] -= scale;
}

// Rows per block of linear_cross_entropy's backward: a block's gradient [rows, V] lives in
// one thread's scratch of at most 2^19 floats (2 MiB: 256 rows at V = 2048) and feeds two
// products of M or K = rows; between 16 and 256 rows whatever V.
size_t loss_block_rows(size_t V) {
    return std::clamp<size_t>((size_t(1) << 19) / std::max<size_t>(V, 1), 16, 256);
}

}  // namespace

// ---- stacked_linear ---------------------------------------------------------------------
// y = x·Wᵀ + b with W = [W_0; W_1; …] stacked by rows, b = [b_0; b_1; …]
//   x:[...,C] W_i:[out_i,C] b_i:[out_i] → y:[...,N], N = Σ out_i; y[..., o_i : o_i + out_i]
//   is linear(x, W_i, b_i). The weights stay separate tensors (a checkpoint keeps their
//   names); the stacked copy [N,C] is made per call — N·C floats, against the R·N·C
//   multiply-adds of the product.
Tensor stacked_linear(const Tensor& x, const std::vector<Tensor>& weights,
                      const std::vector<Tensor>& biases) {
    const Shape sx = x.shape();
    if (weights.empty()) throw std::invalid_argument("stacked_linear: no weights given");
    if (sx.empty())
        throw std::invalid_argument("stacked_linear: x must have at least one dim (got a scalar)");
    if (!biases.empty() && biases.size() != weights.size())
        throw std::invalid_argument("stacked_linear: " + std::to_string(biases.size()) +
                                    " biases for " + std::to_string(weights.size()) +
                                    " weights; give one per weight, or none");
    const size_t C = sx.back(), R = leading_rows(sx);
    std::vector<size_t> offset{0};  // o_i: where W_i's rows start in the stack
    for (size_t i = 0; i < weights.size(); ++i) {
        const Shape sw = weights[i].shape();
        if (sw.size() != 2 || sw[1] != C)
            throw std::invalid_argument("stacked_linear: weight " + std::to_string(i) + " " +
                                        shape_str(sw) + " must be [out, " + std::to_string(C) +
                                        "] for x " + shape_str(sx));
        if (!biases.empty() && (biases[i].dim() != 1 || biases[i].size(0) != sw[0]))
            throw std::invalid_argument("stacked_linear: bias " + std::to_string(i) + " " +
                                        shape_str(biases[i].shape()) + " must be [" +
                                        std::to_string(sw[0]) + "] for weight " + shape_str(sw));
        offset.push_back(offset.back() + sw[0]);
    }
    const size_t N = offset.back();
    auto stacked = std::make_shared<Array>(Array::from_shape({N, C}));  // [N,C]
    for (size_t i = 0; i < weights.size(); ++i)
        std::copy(weights[i].data(), weights[i].data() + weights[i].numel(),
                  stacked->data() + offset[i] * C);

    Shape out_shape(sx.begin(), sx.end() - 1);
    out_shape.push_back(N);
    Array y = Array::from_shape(out_shape);
    std::vector<Real> stacked_bias;  // [b_0; b_1; …]: every row of y starts as it (beta = 1)
    for (const Tensor& b : biases)
        stacked_bias.insert(stacked_bias.end(), b.data(), b.data() + b.numel());
    const Real* row = biases.empty() ? nullptr : stacked_bias.data();
    gemm_rows_parallel(false, true, R, N, C, x.data(), C, stacked->data(), C, Real(row ? 1 : 0),
                       y.data(), N, row);

    std::vector<Tensor> parents{x};
    parents.insert(parents.end(), weights.begin(), weights.end());
    parents.insert(parents.end(), biases.begin(), biases.end());
    return make_result(
        std::move(y), parents, "stacked_linear",
        [x = x, weights = std::vector<Tensor>(weights), biases = std::vector<Tensor>(biases),
         stacked, offset, R, C, N](TensorImpl& o) mutable {
            // stacked_linear backward (dY:[R,N], W = the stack [N,C]):
            //   dx += dY·W [R,C]   (one product over all N)
            //   dW = dYᵀ·x [N,C]   (one product), rows o_i … o_i + out_i added to dW_i
            //   db_i += Σ_rows dY[:, o_i : o_i + out_i]
            const Real* dY = o.grad.data();
            if (Array* gx = grad_of(x))
                gemm_rows_parallel(false, false, R, C, N, dY, N, stacked->data(), C, Real(1),
                                   gx->data(), C);
            bool any_weight = false;
            for (Tensor& w : weights) any_weight = any_weight || grad_of(w);
            if (any_weight) {
                Array dW = Array::from_shape({N, C});
                gemm_rows_parallel(true, false, N, C, R, dY, N, x.data(), C, Real(0), dW.data(), C);
                for (size_t i = 0; i < weights.size(); ++i)
                    if (Array* gw = grad_of(weights[i])) {
                        const Real* src = dW.data() + offset[i] * C;
                        Real* dst = gw->data();
                        for (size_t e = 0, n = gw->size(); e < n; ++e) dst[e] += src[e];
                    }
            }
            bool any_bias = false;
            for (Tensor& b : biases) any_bias = any_bias || grad_of(b);
            if (any_bias) {
                std::vector<Real> db(N, Real(0));
                add_column_sums(dY, R, N, db.data());
                for (size_t i = 0; i < biases.size(); ++i)
                    if (Array* gb = grad_of(biases[i]))
                        for (size_t j = 0; j < gb->size(); ++j) gb->data()[j] += db[offset[i] + j];
            }
        });
}

// ---- linear_cross_entropy ---------------------------------------------------------------
// L = −(1/n) Σ_{r: t_r ≠ ignore} log softmax(x_r·Wᵀ + b)[t_r]
//   x:[R,C] W:[V,C] b:[V] (may be undefined) targets:[R] → L:[] (n = 0 gives L = 0), and the
//   logits [R,V] in *logits when asked (a constant: differentiate L).
// The logits are written once, by one product with b preloaded; the backward reads them back
// and never builds the [R,V] gradient whole (below).
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const std::vector<int>& targets, int ignore_index, Tensor* logits) {
    if (x.dim() != 2 || weight.dim() != 2 || x.size(1) != weight.size(1))
        throw std::invalid_argument("linear_cross_entropy: x " + shape_str(x.shape()) +
                                    " and weight " + shape_str(weight.shape()) +
                                    " must be [R, C] and [V, C]");
    const size_t R = x.size(0), C = x.size(1), V = weight.size(0);
    if (bias.defined() && (bias.dim() != 1 || bias.size(0) != V))
        throw std::invalid_argument("linear_cross_entropy: bias " + shape_str(bias.shape()) +
                                    " must be [" + std::to_string(V) + "] for weight " +
                                    shape_str(weight.shape()));
    if (targets.size() != R)
        throw std::invalid_argument("linear_cross_entropy: " + std::to_string(targets.size()) +
                                    " targets for " + std::to_string(R) +
                                    " rows; need one target per row");
    const size_t count = count_labelled_rows("linear_cross_entropy", targets, V, ignore_index);

    // logits = x·Wᵀ + b, once
    Array z = Array::from_shape({R, V});
    Real* Z = z.data();
    const Real* b = bias.defined() ? bias.data() : nullptr;  // Z's rows start as b (beta = 1)
    gemm_rows_parallel(false, true, R, V, C, x.data(), C, weight.data(), C, Real(b ? 1 : 0), Z, V,
                       b);
    // per-row log-sum-exp (kept for the backward), the row losses summed in row order
    auto lse = std::make_shared<std::vector<Real>>(R, Real(0));
    std::vector<double> row_loss(R, 0.0);
#pragma omp parallel for schedule(static) if (R * V > 65536)
    for (long r = 0; r < long(R); ++r) {
        const int t = targets[size_t(r)];
        if (t == ignore_index) continue;
        const double l = row_logsumexp(Z + size_t(r) * V, V);
        (*lse)[size_t(r)] = Real(l);
        row_loss[size_t(r)] = l - double(Z[size_t(r) * V + size_t(t)]);
    }
    double total = 0.0;
    for (double l : row_loss) total += l;
    Array loss = Array::from_shape({});
    loss() = count ? Real(total / double(count)) : Real(0);

    Tensor kept(std::move(z));  // the logits: handed out and read by the backward, one buffer
    if (logits) *logits = kept;
    std::vector<Tensor> parents{x, weight};
    if (bias.defined()) parents.push_back(bias);
    return make_result(
        std::move(loss), parents, "linear_cross_entropy",
        [x = x, weight = weight, bias = bias, kept, targets, ignore_index, lse, count, R, C,
         V](TensorImpl& o) mutable {
            // linear_cross_entropy backward, G = dL/dlogits:[R,V],
            //   G_r = dL·(softmax(logits_r) − onehot(t_r))/n  (0 for ignored rows)
            //   dx += G·W [R,C]     dW += Gᵀ·x [V,C]     db += Σ_rows G [V]
            // G is made loss_block_rows(V) rows at a time in a thread's scratch and used at once
            // by both products. Rows are split into one contiguous part per thread; each part
            // sums its dW, db in its own buffer, added in part order (same thread count →
            // same numbers).
            if (count == 0) return;
            Array* gx = grad_of(x);
            Array* gw = grad_of(weight);
            Array* gb = grad_of(bias);
            if (!gx && !gw && !gb) return;
            const Real scale = Real(double(o.grad()) / double(count));
            const Real* Z = kept.data();
            const Real* X = x.data();
            const Real* W = weight.data();
            const size_t block = loss_block_rows(V);
            const size_t threads = size_t(std::max(1, omp_get_max_threads()));
            const size_t parts = std::max<size_t>(1, std::min(threads, (R + block - 1) / block));
            const size_t per_part = (R + parts - 1) / parts;
            // part p sums into its own dW, db; part 0 straight into the gradients
            std::vector<Array> part_dw(parts), part_db(parts);
            for (size_t p = 1; p < parts; ++p) {
                if (gw) part_dw[p] = xt::zeros<Real>(std::vector<size_t>{V, C});
                if (gb) part_db[p] = xt::zeros<Real>(std::vector<size_t>{V});
            }
            for_each_product(parts, size_t(1) << 30, [&](size_t p) {
                thread_local std::vector<Real> g_buf;
                if (g_buf.size() < block * V) g_buf.resize(block * V);
                Real* G = g_buf.data();
                Real* dw = gw ? (p == 0 ? gw->data() : part_dw[p].data()) : nullptr;
                Real* db = gb ? (p == 0 ? gb->data() : part_db[p].data()) : nullptr;
                const size_t end = std::min(R, (p + 1) * per_part);
                for (size_t r0 = std::min(R, p * per_part); r0 < end; r0 += block) {
                    const size_t rows = std::min(block, end - r0);
                    for (size_t i = 0; i < rows; ++i) {
                        const int t = targets[r0 + i];
                        Real* g = G + i * V;
                        if (t == ignore_index)
                            std::fill(g, g + V, Real(0));
                        else
                            row_loss_gradient(Z + (r0 + i) * V, (*lse)[r0 + i], t, scale, g, V);
                    }
                    if (gx)
                        block_gemm(false, false, rows, C, V, G, V, W, C, Real(1), gx->data() + r0 * C, C);
                    if (dw) block_gemm(true, false, V, C, rows, G, V, X + r0 * C, C, Real(1), dw, C);
                    if (db)
                        for (size_t i = 0; i < rows; ++i)
                            for (size_t j = 0; j < V; ++j) db[j] += G[i * V + j];
                }
            });
            for (size_t p = 1; p < parts; ++p) {
                if (gw) *gw += part_dw[p];
                if (gb) *gb += part_db[p];
            }
        });
}

}  // namespace rf
