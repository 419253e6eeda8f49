// Room — linear: kernelised (linear) attention as ops, RoFormer §3.3 eq. (19), and its two
// feature maps (elu + 1 and FAVOR+). Its softmax counterpart, causal_softmax, is in
// src/ops/softmax.cpp.
//
// Legend:  B batch, H heads — the leading dims "...", flattened into N = B·H rows
//          T tokens   D head size (of v)   F feature size (of φ(q), φ(k))   M random features
//          m, n, t positions   g = dL/dout   S = Σ_n k_num_n v_nᵀ [F,D]   z = Σ_n k_den_n [F]
//
// Softmax attention weighs v_n by exp(q_m·k_n) and needs the T×T matrix. With a positive
// feature map φ the similarity becomes φ(q_m)·φ(k_n) and the sums reassociate:
//     out_m = Σ_n (φq_m·φk_n) v_n / Σ_n φq_m·φk_n = φq_mᵀ S / φq_m·z
// — one F×D state per (batch, head) row instead of T×T weights: O(T·F·D) work, no T² memory.
// Causal (n ≤ m) is the same with running sums S_t = S_{t−1} + k_num_t v_tᵀ, z_t = z_{t−1} +
// k_den_t: an RNN over t. RoPE (eq. 19) rotates the numerator features only, so the numerator
// and the denominator take separate feature tensors (docs/linear_attention.md).
//
// Every row is independent: the row loops run under OpenMP, each row (its outputs and its
// slice of every gradient) written by one thread, so results do not depend on scheduling.
// States and dot products are accumulated in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "linear/linear_attention.hpp"
#include "ops/ops.hpp"

namespace rf {

// ---- elu_plus_one -------------------------------------------------------------------------
// y = x + 1 (x > 0), eˣ (x ≤ 0)   x:[...] → y:[...]   (Katharopoulos et al. 2020)
Tensor elu_plus_one(const Tensor& x) {
    const size_t n = x.numel();
    Array y = Array::from_shape(x.shape());
    const Real* in = x.data();
    Real* out = y.data();
#pragma omp parallel for schedule(static) if (n > 32768)
    for (long i = 0; i < long(n); ++i) {
        const Real v = in[i];
        out[i] = v > Real(0) ? v + Real(1) : std::exp(v);
    }
    return make_result(std::move(y), {x}, "elu_plus_one", [x = x](TensorImpl& o) mutable {
        // elu_plus_one backward: dx += dy · (1 if x > 0 else eˣ = y)   [...]
        Array* g = grad_of(x);
        if (!g) return;
        const size_t n = x.numel();
        const Real* in = x.data();
        const Real* Y = o.data.data();
        const Real* dY = o.grad.data();
        Real* dX = g->data();
#pragma omp parallel for schedule(static) if (n > 32768)
        for (long i = 0; i < long(n); ++i) dX[i] += dY[i] * (in[i] > Real(0) ? Real(1) : Y[i]);
    });
}

// ---- linear_attention ---------------------------------------------------------------------
namespace {

// One key into the state: S += k_num v_ᵀ [F,D], z += k_den [F] — the forward and the
// backward's forward sweep share it.
void absorb_key(std::vector<double>& S, std::vector<double>& z, const Real* k_num,
                const Real* k_den, const Real* v, size_t F, size_t D) {
    for (size_t f = 0; f < F; ++f) {
        z[f] += k_den[f];
        double* Sf = S.data() + f * D;
        for (size_t d = 0; d < D; ++d) Sf[d] += double(k_num[f]) * v[d];
    }
}

// The state S_t, z_t of one row at every t, in order: visit(t) sees the sums over n ≤ t
// (causal) or over all n (bidirectional). The forward and the backward's forward sweep share it.
template <class Visit>
void sweep_states(std::vector<double>& S, std::vector<double>& z, const Real* k_num,
                  const Real* k_den, const Real* v, size_t T, size_t F, size_t D, bool causal,
                  Visit&& visit) {
    const auto absorb = [&](size_t t) {
        absorb_key(S, z, k_num + t * F, k_den + t * F, v + t * D, F, D);
    };
    if (!causal)
        for (size_t t = 0; t < T; ++t) absorb(t);
    for (size_t t = 0; t < T; ++t) {
        if (causal) absorb(t);
        visit(t);
    }
}

struct AttentionDims {
    size_t N, T, F, D;
};

AttentionDims check_linear_attention(const Tensor& q_num, const Tensor& k_num, const Tensor& v,
                                     const Tensor& q_den, const Tensor& k_den) {
    const Shape s = q_num.shape();
    const auto all = [&]() {
        return " (q_num " + shape_str(q_num.shape()) + ", k_num " + shape_str(k_num.shape()) +
               ", v " + shape_str(v.shape()) + ", q_den " + shape_str(q_den.shape()) + ", k_den " +
               shape_str(k_den.shape()) + ")";
    };
    if (s.size() < 2 || s.back() == 0)
        throw std::invalid_argument("linear_attention: features must be [..., T, F] with F ≥ 1" +
                                    all());
    if (k_num.shape() != s || q_den.shape() != s || k_den.shape() != s)
        throw std::invalid_argument(
            "linear_attention: q_num, k_num, q_den and k_den must have one shape [..., T, F]" +
            all());
    const Shape sv = v.shape();
    if (sv.size() != s.size() || !std::equal(s.begin(), s.end() - 1, sv.begin()))
        throw std::invalid_argument(
            "linear_attention: v must be [..., T, D] with the leading dims and T of the "
            "features" +
            all());
    AttentionDims d;
    d.T = s[s.size() - 2];
    d.F = s.back();
    d.D = sv.back();
    d.N = 1;
    for (size_t i = 0; i + 2 < s.size(); ++i) d.N *= s[i];
    return d;
}

}  // namespace

// out_m = q_num_mᵀ S_m / q_den_m·z_m, S_m = Σ_n k_num_n v_nᵀ, z_m = Σ_n k_den_n over n ≤ m
// (causal) or all n   q_num, k_num, q_den, k_den:[..., T, F] v:[..., T, D] → out:[..., T, D]
Tensor linear_attention(const Tensor& q_num, const Tensor& k_num, const Tensor& v,
                        const Tensor& q_den, const Tensor& k_den, bool causal) {
    const AttentionDims dims = check_linear_attention(q_num, k_num, v, q_den, k_den);
    const size_t N = dims.N, T = dims.T, F = dims.F, D = dims.D;
    Shape out_shape = v.shape();
    Array y = Array::from_shape(out_shape);
    std::vector<double> den(N * T);  // den_m = q_den_m·z_m, saved for the backward
    const Real* QN = q_num.data();
    const Real* KN = k_num.data();
    const Real* V = v.data();
    const Real* QD = q_den.data();
    const Real* KD = k_den.data();
    Real* Y = y.data();
#pragma omp parallel for schedule(static) if (N * T * F * D > 32768)
    for (long r = 0; r < long(N); ++r) {
        const size_t tf = size_t(r) * T * F, td = size_t(r) * T * D;
        std::vector<double> S(F * D, 0.0), z(F, 0.0), num(D);
        sweep_states(S, z, KN + tf, KD + tf, V + td, T, F, D, causal, [&](size_t t) {
            const Real* qn = QN + tf + t * F;
            const Real* qd = QD + tf + t * F;
            double dn = 0.0;
            std::fill(num.begin(), num.end(), 0.0);
            for (size_t f = 0; f < F; ++f) {
                dn += double(qd[f]) * z[f];
                const double* Sf = S.data() + f * D;
                for (size_t d = 0; d < D; ++d) num[d] += double(qn[f]) * Sf[d];
            }
            den[size_t(r) * T + t] = dn;
            for (size_t d = 0; d < D; ++d) Y[td + t * D + d] = Real(num[d] / dn);
        });
    }

    return make_result(
        std::move(y), {q_num, k_num, v, q_den, k_den}, "linear_attention",
        [q_num = q_num, k_num = k_num, v = v, q_den = q_den, k_den = k_den, den = std::move(den),
         causal, N, T, F, D](TensorImpl& o) mutable {
            // linear_attention backward, u_t = g_t/den_t [D], β_t = −(g_t·out_t)/den_t, per row:
            //   dq_num_t += S_t u_t [F]   dq_den_t += β_t z_t [F]   (S_t, z_t re-summed forwards)
            //   G_t = Σ_{m ≥ t} q_num_m u_mᵀ [F,D], h_t = Σ_{m ≥ t} β_m q_den_m [F] (summed
            //   backwards; bidirectional: m over all T)
            //   dk_num_t += G_t v_t [F]   dv_t += G_tᵀ k_num_t [D]   dk_den_t += h_t [F]
            Array* gqn = grad_of(q_num);
            Array* gkn = grad_of(k_num);
            Array* gv = grad_of(v);
            Array* gqd = grad_of(q_den);
            Array* gkd = grad_of(k_den);
            const bool want_q = gqn || gqd, want_k = gkn || gv || gkd;
            const Real* QN = q_num.data();
            const Real* KN = k_num.data();
            const Real* V = v.data();
            const Real* QD = q_den.data();
            const Real* KD = k_den.data();
            const Real* Y = o.data.data();
            const Real* dY = o.grad.data();
            Real* dQN = gqn ? gqn->data() : nullptr;
            Real* dKN = gkn ? gkn->data() : nullptr;
            Real* dV = gv ? gv->data() : nullptr;
            Real* dQD = gqd ? gqd->data() : nullptr;
            Real* dKD = gkd ? gkd->data() : nullptr;
#pragma omp parallel for schedule(static) if (N * T * F * D > 32768)
            for (long r = 0; r < long(N); ++r) {
                const size_t tf = size_t(r) * T * F, td = size_t(r) * T * D;
                const double* dn = den.data() + size_t(r) * T;
                std::vector<double> u(D);
                // u = g_t/den_t; returns β_t = −(g_t·out_t)/den_t
                const auto upstream = [&](size_t t) {
                    const Real* g = dY + td + t * D;
                    const Real* yt = Y + td + t * D;
                    double gy = 0.0;
                    for (size_t d = 0; d < D; ++d) {
                        u[d] = double(g[d]) / dn[t];
                        gy += double(g[d]) * yt[d];
                    }
                    return -gy / dn[t];
                };
                if (want_q) {  // forward sweep: the states S_t, z_t again, one step at a time
                    std::vector<double> S(F * D, 0.0), z(F, 0.0);
                    sweep_states(S, z, KN + tf, KD + tf, V + td, T, F, D, causal, [&](size_t t) {
                        const double beta = upstream(t);
                        for (size_t f = 0; f < F; ++f) {
                            if (dQN) {
                                const double* Sf = S.data() + f * D;
                                double acc = 0.0;
                                for (size_t d = 0; d < D; ++d) acc += Sf[d] * u[d];
                                dQN[tf + t * F + f] += Real(acc);
                            }
                            if (dQD) dQD[tf + t * F + f] += Real(beta * z[f]);
                        }
                    });
                }
                if (want_k) {  // reverse sweep: G, h are the reverse running sums
                    std::vector<double> G(F * D, 0.0), h(F, 0.0);
                    const auto absorb = [&](size_t t) {
                        const double beta = upstream(t);
                        const Real* qn = QN + tf + t * F;
                        const Real* qd = QD + tf + t * F;
                        for (size_t f = 0; f < F; ++f) {
                            h[f] += beta * qd[f];
                            double* Gf = G.data() + f * D;
                            for (size_t d = 0; d < D; ++d) Gf[d] += double(qn[f]) * u[d];
                        }
                    };
                    if (!causal)
                        for (size_t t = 0; t < T; ++t) absorb(t);
                    for (size_t t = T; t-- > 0;) {
                        if (causal) absorb(t);
                        const Real* kn = KN + tf + t * F;
                        const Real* vt = V + td + t * D;
                        for (size_t f = 0; f < F; ++f) {
                            const double* Gf = G.data() + f * D;
                            if (dKN) {
                                double acc = 0.0;
                                for (size_t d = 0; d < D; ++d) acc += Gf[d] * vt[d];
                                dKN[tf + t * F + f] += Real(acc);
                            }
                            if (dKD) dKD[tf + t * F + f] += Real(h[f]);
                        }
                        if (dV)
                            for (size_t d = 0; d < D; ++d) {
                                double acc = 0.0;
                                for (size_t f = 0; f < F; ++f) acc += G[f * D + d] * kn[f];
                                dV[td + t * D + d] += Real(acc);
                            }
                    }
                }
            }
        });
}

// ---- favor_features -----------------------------------------------------------------------
// φ(x)_j = exp(W_j·x̃ − |x̃|²/2 − c) / √M, x̃ = x·D^(−1/4)   x:[..., T, D] W:[M, D] → [..., T, M]
// (Choromanski et al. 2020, positive random features). The stabiliser c keeps exp ≤ 1:
//   queries: c_t = max_j W_j·x̃_t, one per row — attention divides φ(q_m)-linear numerator by
//            a φ(q_m)-linear denominator (RoPE's R_m is linear too), so e^{−c_m} cancels;
//   keys:    c = max over t and j of the slice, one per (batch, head) — every key of a row's
//            attention is scaled by the same e^{−c}, which cancels again.
// The backward treats c as a constant. Alone that is not the derivative of φ (c moves with
// x through a max); through linear_attention it is exact, because the output does not
// depend on c at all (docs/linear_attention.md). stabilise = false sets c = 0: the plain map,
// exactly differentiable. W is a constant (fixed random features): it gets no gradient.
Tensor favor_features(const Tensor& x, const Tensor& projection, bool is_query, bool stabilise) {
    if (x.dim() < 2 || projection.dim() != 2 || projection.size(0) == 0 ||
        projection.size(1) != x.size(-1) || x.size(-1) == 0)
        throw std::invalid_argument(
            "favor_features: x must be [..., T, D] (D ≥ 1) and the "
            "projection [M, D] (M ≥ 1), got x " +
            shape_str(x.shape()) + " and projection " + shape_str(projection.shape()));
    const size_t D = x.size(-1), T = x.size(-2), M = projection.size(0);
    const size_t N = T ? x.numel() / (T * D) : 0;
    Shape out_shape = x.shape();
    out_shape.back() = M;
    Array y = Array::from_shape(out_shape);
    Array W = projection.value();  // a copy: redrawing the features later cannot reach backward
    const double scale = std::pow(double(D), -0.25), inv_sqrt_m = 1.0 / std::sqrt(double(M));
    const Real* X = x.data();
    const Real* P = W.data();
    Real* Y = y.data();
#pragma omp parallel for schedule(static) if (N * T * M * D > 32768)
    for (long s = 0; s < long(N); ++s) {
        // exponents e_tj = W_j·x̃_t − |x̃_t|²/2 of the whole slice, then the stabiliser
        std::vector<double> e(T * M), row_max(T, -std::numeric_limits<double>::infinity());
        for (size_t t = 0; t < T; ++t) {
            const Real* xt = X + (size_t(s) * T + t) * D;
            double half_sq = 0.0;
            for (size_t d = 0; d < D; ++d) half_sq += 0.5 * (scale * xt[d]) * (scale * xt[d]);
            for (size_t j = 0; j < M; ++j) {
                const Real* wj = P + j * D;
                double dot = 0.0;
                for (size_t d = 0; d < D; ++d) dot += double(wj[d]) * (scale * xt[d]);
                e[t * M + j] = dot - half_sq;
                row_max[t] = std::max(row_max[t], dot);
            }
        }
        const double slice_max = T ? *std::max_element(row_max.begin(), row_max.end()) : 0.0;
        for (size_t t = 0; t < T; ++t) {
            const double c = !stabilise ? 0.0 : is_query ? row_max[t] : slice_max;
            Real* yt = Y + (size_t(s) * T + t) * M;
            for (size_t j = 0; j < M; ++j) yt[j] = Real(std::exp(e[t * M + j] - c) * inv_sqrt_m);
        }
    }
    return make_result(std::move(y), {x}, "favor_features",
                       [x = x, W = std::move(W), scale, N, T, M, D](TensorImpl& o) mutable {
                           // favor_features backward, c constant: dx_t += D^(−1/4)·(Wᵀ(g_t⊙φ_t) −
                           // x̃_t Σ_j g_tj φ_tj)
                           // [..., T, D], since ∂φ_j/∂x̃ = φ_j (W_j − x̃)
                           Array* gx = grad_of(x);
                           if (!gx) return;
                           const size_t rows = N * T;
                           const Real* X = x.data();
                           const Real* P = W.data();
                           const Real* Phi = o.data.data();
                           const Real* dY = o.grad.data();
                           Real* dX = gx->data();
#pragma omp parallel for schedule(static) if (rows * M * D > 32768)
                           for (long r = 0; r < long(rows); ++r) {
                               const Real* xt = X + size_t(r) * D;
                               const Real* phi = Phi + size_t(r) * M;
                               const Real* g = dY + size_t(r) * M;
                               std::vector<double> acc(D, 0.0);
                               double gphi_sum = 0.0;
                               for (size_t j = 0; j < M; ++j) {
                                   const double gphi = double(g[j]) * phi[j];
                                   gphi_sum += gphi;
                                   const Real* wj = P + j * D;
                                   for (size_t d = 0; d < D; ++d) acc[d] += gphi * wj[d];
                               }
                               for (size_t d = 0; d < D; ++d)
                                   dX[size_t(r) * D + d] +=
                                       Real(scale * (acc[d] - scale * xt[d] * gphi_sum));
                           }
                       });
}

}  // namespace rf
