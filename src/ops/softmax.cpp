// Stage 2 — ops: softmax (and its causal form, the future masked), log-softmax and the
// cross-entropy loss (one op: log-sum-exp and NLL in one node), over the last axis.
//
// Legend:  R  rows = product of all dims but the last     C  size of the last axis
//          N  positions (rows of logits)                   V  vocabulary (classes)
//          T  tokens (causal_softmax: scores [..., T, T], row i is query position i)
//
// Every row is shifted by its maximum before exponentiating, so exp never overflows
// (softmax([1000, 1001]) is as exact as softmax([0, 1])). One thread, row after row (the fast
// path's fused twins are the ones that thread). Sums are accumulated in double.
// softmax and causal_softmax share one row kernel, forward and backward: causal row i is a
// softmax of its first i + 1 entries.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backward_kernels.hpp"
#include "ops/ops.hpp"

namespace rf {
namespace {

void require_last_axis(const Tensor& x, const char* op) {
    if (x.dim() == 0 || x.size(-1) == 0)
        throw std::invalid_argument(std::string(op) + ": needs a non-empty last axis, got shape " +
                                    shape_str(x.shape()));
}

// For one row: m = max(x), returns log Σ exp(x − m) + m  (the log-sum-exp).
double row_logsumexp(const Real* x, size_t C) {
    const Real m = *std::max_element(x, x + C);
    double total = 0.0;
    for (size_t j = 0; j < C; ++j) total += std::exp(x[j] - m);  // exp in Real, sum in double
    return double(m) + std::log(total);
}

// For one row of n entries: y = exp(x − max) / Σ exp(x − max), exp in Real, the sum in double.
void softmax_row(const Real* x, Real* y, size_t n) {
    const Real m = *std::max_element(x, x + n);
    double total = 0.0;
    for (size_t j = 0; j < n; ++j) {
        y[j] = std::exp(x[j] - m);
        total += y[j];
    }
    const Real inv = Real(1.0 / total);
    for (size_t j = 0; j < n; ++j) y[j] *= inv;
}

}  // namespace

// softmax_row's backward (declared in backward_kernels.hpp: causal_softmax calls it too).
// <!-- answer:begin softmax_backward -->
// y = softmax(x) over a row has Jacobian ∂y_i/∂x_j = y_i(δ_ij − y_j), so
//   dx_j = Σ_i dy_i·y_i(δ_ij − y_j) = y_j·(dy_j − Σ_i dy_i·y_i)     (docs/backward.md)
// The dot product is summed in double.
// <!-- answer:end -->
// graded:begin softmax_backward (students/tasks/softmax_backward.cpp)
void softmax_row_backward(const Real* y, const Real* dy, Real* dx, size_t n) {
    double dot = 0.0;
    for (size_t j = 0; j < n; ++j) dot += double(dy[j]) * y[j];
    for (size_t j = 0; j < n; ++j) dx[j] += y[j] * (dy[j] - Real(dot));
}
// graded:end softmax_backward

// ---- softmax ------------------------------------------------------------------------------
// y = exp(x − max) / Σ exp(x − max)   x:[..., C] → y:[..., C]
Tensor softmax(const Tensor& x) {
    require_last_axis(x, "softmax");
    const size_t C = x.size(-1), R = x.numel() / C;
    Array y = Array::from_shape(x.value().shape());
    const Real* X = x.data();
    Real* Y = y.data();
    for (long r = 0; r < long(R); ++r) softmax_row(X + size_t(r) * C, Y + size_t(r) * C, C);
    return make_result(std::move(y), {x}, "softmax", [x = x, R, C](TensorImpl& o) mutable {
        // softmax backward: softmax_row_backward (above) on every row, [..., C]
        Array* gx = grad_of(x);
        if (!gx) return;
        const Real* Y = o.data.data();  // the saved output
        const Real* dY = o.grad.data();
        Real* dX = gx->data();
        for (long r = 0; r < long(R); ++r) {
            const size_t off = size_t(r) * C;
            softmax_row_backward(Y + off, dY + off, dX + off, C);
        }
    });
}

// ---- causal_softmax -----------------------------------------------------------------------
// y_ij = exp(x_ij − max_{j'≤i} x_ij') / Σ_{j'≤i} exp(x_ij' − max) for j ≤ i, y_ij = 0 for j > i
// x:[..., T, T] → y:[..., T, T]   (i the query position, j the key position)
Tensor causal_softmax(const Tensor& scores) {
    if (scores.dim() < 2 || scores.size(-1) != scores.size(-2))
        throw std::invalid_argument("causal_softmax: scores must be [..., T, T], got " +
                                    shape_str(scores.shape()));
    const size_t T = scores.size(-1), R = T ? scores.numel() / T : 0;
    Array y = Array::from_shape(scores.value().shape());
    const Real* X = scores.data();
    Real* Y = y.data();
    for (long r = 0; r < long(R); ++r) {
        const size_t i = size_t(r) % T, off = size_t(r) * T;  // row r is query position i
        softmax_row(X + off, Y + off, i + 1);
        for (size_t j = i + 1; j < T; ++j) Y[off + j] = Real(0);
    }
    return make_result(std::move(y), {scores}, "causal_softmax",
                       [scores = scores, R, T](TensorImpl& o) mutable {
                           // causal_softmax backward: dx_ij += y_ij·(dy_ij − Σ_{j'≤i} dy_ij'·y_ij')
                           // for j ≤ i, nothing for j > i (y is constant 0 there)   [..., T, T]
                           Array* g = grad_of(scores);
                           if (!g) return;
                           const Real* Y = o.data.data();  // the saved output
                           const Real* dY = o.grad.data();
                           Real* dX = g->data();
                           for (long r = 0; r < long(R); ++r) {
                               const size_t i = size_t(r) % T, off = size_t(r) * T;
                               softmax_row_backward(Y + off, dY + off, dX + off, i + 1);
                           }
                       });
}

// ---- log_softmax --------------------------------------------------------------------------
// y = x − logsumexp(x)   x:[..., C] → y:[..., C]
Tensor log_softmax(const Tensor& x) {
    require_last_axis(x, "log_softmax");
    const size_t C = x.size(-1), R = x.numel() / C;
    Array y = Array::from_shape(x.value().shape());
    const Real* X = x.data();
    Real* Y = y.data();
    for (long r = 0; r < long(R); ++r) {
        const size_t off = size_t(r) * C;
        const double lse = row_logsumexp(X + off, C);
        for (size_t j = 0; j < C; ++j) Y[off + j] = Real(double(X[off + j]) - lse);
    }
    return make_result(std::move(y), {x}, "log_softmax", [x = x, R, C](TensorImpl& o) mutable {
        // log_softmax backward: dx += dy − softmax(x)·Σ_j dy_j,  softmax = exp(y)   [..., C]
        Array* gx = grad_of(x);
        if (!gx) return;
        const Real* Y = o.data.data();  // the saved output
        const Real* dY = o.grad.data();
        Real* dX = gx->data();
        for (long r = 0; r < long(R); ++r) {
            const size_t off = size_t(r) * C;
            double total = 0.0;
            for (size_t j = 0; j < C; ++j) total += dY[off + j];
            for (size_t j = 0; j < C; ++j)
                dX[off + j] += dY[off + j] - std::exp(Y[off + j]) * Real(total);
        }
    });
}

// ---- cross_entropy ------------------------------------------------------------------------
// L = −(1/n) Σ_{i: t_i ≠ ignore} log softmax(logits_i)[t_i]   logits:[N, V] targets:[N] → []
// (n = number of non-ignored rows; n = 0 gives L = 0.)
size_t count_labelled_rows(const char* op, const std::vector<int>& targets, size_t V,
                           int ignore_index) {
    size_t count = 0;
    for (size_t i = 0; i < targets.size(); ++i) {
        const int t = targets[i];
        if (t == ignore_index) continue;
        if (t < 0 || size_t(t) >= V)
            throw std::invalid_argument(std::string(op) + ": target " + std::to_string(t) +
                                        " at row " + std::to_string(i) + " is outside [0, " +
                                        std::to_string(V) + ") and is not ignore_index " +
                                        std::to_string(ignore_index));
        ++count;
    }
    return count;
}

Tensor cross_entropy(const Tensor& logits, const std::vector<int>& targets, int ignore_index) {
    if (logits.dim() != 2)
        throw std::invalid_argument("cross_entropy: logits must be [N, V], got " +
                                    shape_str(logits.shape()) + "; reshape to 2-D first");
    const size_t N = logits.size(0), V = logits.size(1);
    if (targets.size() != N)
        throw std::invalid_argument("cross_entropy: " + std::to_string(targets.size()) +
                                    " targets for logits " + shape_str(logits.shape()) +
                                    "; need one target per row");
    const size_t count = count_labelled_rows("cross_entropy", targets, V, ignore_index);

    // Per-row log-sum-exp, kept for backward; per-row losses summed in row order afterwards.
    const Real* X = logits.data();
    std::vector<double> lse(N, 0.0), row_loss(N, 0.0);
    for (long i = 0; i < long(N); ++i) {
        if (targets[size_t(i)] == ignore_index) continue;
        const size_t off = size_t(i) * V;
        lse[size_t(i)] = row_logsumexp(X + off, V);
        row_loss[size_t(i)] = lse[size_t(i)] - double(X[off + size_t(targets[size_t(i)])]);
    }
    double total = 0.0;
    for (double l : row_loss) total += l;
    Array loss = Array::from_shape({});
    loss() = count ? Real(total / double(count)) : Real(0);

    return make_result(std::move(loss), {logits}, "cross_entropy",
                       [logits = logits, targets, ignore_index, lse = std::move(lse), count, N,
                        V](TensorImpl& o) mutable {
                           // cross_entropy backward: dlogits_i += dL·(softmax(logits_i) −
                           // onehot(t_i)) / n for non-ignored rows i; ignored rows (and n = 0) get
                           // nothing.   [N, V]
                           Array* g = grad_of(logits);
                           if (!g || count == 0) return;
                           const Real scale = Real(double(o.grad()) / double(count));
                           const Real* X = logits.data();
                           Real* dX = g->data();
                           for (long i = 0; i < long(N); ++i) {
                               const int t = targets[size_t(i)];
                               if (t == ignore_index) continue;
                               const size_t off = size_t(i) * V;
                               const Real row_lse = Real(lse[size_t(i)]);
                               for (size_t j = 0; j < V; ++j)
                                   dX[off + j] += scale * std::exp(X[off + j] - row_lse);
                               dX[off + size_t(t)] -= scale;
                           }
                       });
}

}  // namespace rf
