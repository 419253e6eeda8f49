// Stage 5 — model: softmax self-attention as one op (see fused_attention.hpp for the plan).
//
// Legend: B batch, T tokens, H heads, D head size, C = H·D, r rotary dims, P probs [B,H,T,T].
// A tile is one (b, h): its rows of q, k, v, ctx start at (b·T)·C + h·D, with row stride C.
// The row math is the composed path's (scale after the product, then a max-shifted softmax),
// vectorised with xsimd: max, exp and the sums run over SIMD lanes, the sums in Real (every
// term is ≤ 1 after the shift) instead of the composed path's serial double sum. The row
// kernels are SimdKernels::softmax_row / softmax_row_backward (src/ops/simd_kernels.hpp) of
// the ISA in force (model.isa), taken when the op runs and kept for its backward. The two
// paths agree to float rounding on every ISA (tests/test_fused_attention.cpp).
#include "model/fused_attention.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ops/gemm.hpp"
#include "ops/simd.hpp"
#include "position/position.hpp"

namespace rf {
namespace {

// The angle rows of positions 0 … T−1, copied: the table may grow (and move) before backward.
// The rotation runs in SIMD lanes of the ISA in force (SimdKernels::rope_rows_*, the same
// formula as rope_kernel); interleaved pairs take the angles expanded to one per dim.
struct TileRotation {
    size_t dims = 0;  // r; 0 = no rotation
    RopePairing pairing = RopePairing::interleaved;
    std::vector<Real> cos, sin;  // [T, r/2]; interleaved: [T, r], (c0, c0, c1, c1, …) and
                                 // (−s0, s0, −s1, s1, …)
    const SimdKernels* kernels = nullptr;

    // x[t, :] ← R_t x[t, :] (sign +1) or R_tᵀ x[t, :] (sign −1), T rows of D
    void rotate(Real* x, size_t T, size_t D, Real sign) const {
        if (pairing == RopePairing::interleaved)
            kernels->rope_rows_interleaved(x, T, D, dims, cos.data(), sin.data(), sign);
        else
            kernels->rope_rows_half(x, T, D, dims, cos.data(), sin.data(), sign);
    }
};

// Per-thread scratch, grown once and reused by every tile and step (no allocation per tile).
Real* scratch(std::vector<Real>& buffer, size_t n) {
    if (buffer.size() < n) buffer.resize(n);
    return buffer.data();
}

// dst[t, :] = R_t src[t·C : t·C + D]   (a head's [T,D] rows, gathered contiguous, rotated)
void gather_rows(const Real* src, size_t T, size_t D, size_t C, const TileRotation& rot,
                 Real* dst) {
    for (size_t t = 0; t < T; ++t) std::copy(src + t * C, src + t * C + D, dst + t * D);
    if (rot.dims) rot.rotate(dst, T, D, Real(1));
}

// dst[t·C : t·C + D] += R_tᵀ g[t, :]   (a tile's gradient rotated back and scattered into
// [B,T,C]; g is overwritten)
void scatter_rows(Real* g, size_t T, size_t D, size_t C, const TileRotation& rot, Real* dst) {
    if (rot.dims) rot.rotate(g, T, D, Real(-1));
    for (size_t t = 0; t < T; ++t)
        for (size_t d = 0; d < D; ++d) dst[t * C + d] += g[t * D + d];
}

}  // namespace

// ctx_h = softmax(R q_h·(R k_h)ᵀ/√D) · v_h per tile   q,k,v:[B,T,C] → ctx:[B,T,C]
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, size_t num_heads,
                       RopeTable* table, bool causal) {
    if (q.dim() != 3 || k.shape() != q.shape() || v.shape() != q.shape())
        throw std::invalid_argument("fused_attention: q, k, v must be one [B,T,C] shape, got " +
                                    shape_str(q.shape()) + ", " + shape_str(k.shape()) + ", " +
                                    shape_str(v.shape()));
    const size_t B = q.size(0), T = q.size(1), C = q.size(2), H = num_heads;
    const size_t D = attention_head_size(C, H);
    auto rot = std::make_shared<TileRotation>();
    if (table) {
        if (table->options().head_dim != D)
            throw std::invalid_argument("fused_attention: the RoPE table is for head size " +
                                        std::to_string(table->options().head_dim) + ", not " +
                                        std::to_string(D));
        table->reserve(T);
        rot->dims = table->options().rotary_dims;
        rot->pairing = table->options().pairing;
        const size_t half = table->half();
        rot->kernels = &simd_kernels();
        if (rot->pairing == RopePairing::interleaved) {
            rot->cos.resize(T * 2 * half);
            rot->sin.resize(T * 2 * half);
            for (size_t t = 0; t < T; ++t)
                for (size_t i = 0; i < half; ++i) {
                    const Real c = table->cos_row(t)[i], sn = table->sin_row(t)[i];
                    const size_t at = t * 2 * half + 2 * i;
                    rot->cos[at] = rot->cos[at + 1] = c;
                    rot->sin[at] = -sn;
                    rot->sin[at + 1] = sn;
                }
        } else {
            rot->cos.assign(table->cos_row(0), table->cos_row(0) + T * half);
            rot->sin.assign(table->sin_row(0), table->sin_row(0) + T * half);
        }
    }
    const Real scale = Real(1.0 / std::sqrt(double(D)));
    const SimdKernels* kernels = &simd_kernels();
    auto probs = std::make_shared<std::vector<Real>>(B * H * T * T);
    Array out = Array::from_shape({B, T, C});

    const Real* Q = q.data();
    const Real* K = k.data();
    const Real* V = v.data();
    Real* P = probs->data();
    Real* O = out.data();
    for_each_product(B * H, 4 * T * T * D, [&](size_t tile) {
        thread_local std::vector<Real> q_buf, k_buf;
        const size_t b = tile / H, h = tile % H, base = b * T * C + h * D;
        Real* qt = scratch(q_buf, T * D);
        Real* kt = scratch(k_buf, T * D);
        gather_rows(Q + base, T, D, C, *rot, qt);
        gather_rows(K + base, T, D, C, *rot, kt);
        Real* S = P + tile * T * T;
        gemm(false, true, T, T, D, qt, D, kt, D, Real(0), S, T);  // scores [T,T]
        for (size_t i = 0; i < T; ++i)
            kernels->softmax_row(S + i * T, causal ? i + 1 : T, T, scale);
        gemm(false, false, T, D, T, S, T, V + base, C, Real(0), O + base, C);  // ctx rows
    });

    return make_result(
        std::move(out), {q, k, v}, "fused_attention",
        [q = q, k = k, v = v, H, D, scale, causal, rot, probs, kernels](TensorImpl& o) mutable {
            // fused_attention backward, per tile (S = probs, Ŝ = dscores):
            //   dS = dctx·vᵀ [T,T]     dv += Sᵀ·dctx [T,D]     Ŝ = S ⊙ (dS − rowsum(dS ⊙ S))/√D
            //   dq += R_mᵀ(Ŝ·R k) [T,D]     dk += R_nᵀ(Ŝᵀ·R q) [T,D]
            const size_t B = q.size(0), T = q.size(1), C = q.size(2);
            Array* gq = grad_of(q);
            Array* gk = grad_of(k);
            Array* gv = grad_of(v);
            const Real* dO = o.grad.data();
            const Real* Q = q.data();
            const Real* K = k.data();
            const Real* V = v.data();
            const Real* P = probs->data();
            for_each_product(B * H, 8 * T * T * D, [&](size_t tile) {
                thread_local std::vector<Real> q_buf, k_buf, ds_buf, g_buf;
                const size_t b = tile / H, h = tile % H, base = b * T * C + h * D;
                const Real* S = P + tile * T * T;
                if (gv)
                    gemm(true, false, T, D, T, S, T, dO + base, C, Real(1), gv->data() + base, C);
                if (!gq && !gk) return;
                Real* dS = scratch(ds_buf, T * T);
                gemm(false, true, T, T, D, dO + base, C, V + base, C, Real(0), dS, T);
                for (size_t i = 0; i < T; ++i)
                    kernels->softmax_row_backward(S + i * T, dS + i * T, causal ? i + 1 : T, T,
                                                  scale);
                Real* qt = scratch(q_buf, T * D);
                Real* kt = scratch(k_buf, T * D);
                Real* g = scratch(g_buf, T * D);
                gather_rows(Q + base, T, D, C, *rot, qt);
                gather_rows(K + base, T, D, C, *rot, kt);
                if (gq) {
                    gemm(false, false, T, D, T, dS, T, kt, D, Real(0), g, D);  // Ŝ·R k
                    scatter_rows(g, T, D, C, *rot, gq->data() + base);
                }
                if (gk) {
                    gemm(true, false, T, D, T, dS, T, qt, D, Real(0), g, D);  // Ŝᵀ·R q
                    scatter_rows(g, T, D, C, *rot, gk->data() + base);
                }
            });
        });
}

}  // namespace rf
