// Room — fast: softmax self-attention as one op (see fused_attention.hpp for the plan).
//
// Legend: B batch, T tokens, H heads, D head size, C = H·D, r rotary dims, P probs [B,H,T,T].
// A tile is one (b, h): its rows of q, k, v, ctx start at (b·T)·C + h·D, with row stride C.
// The row math is the composed path's (scale after the product, then a max-shifted softmax),
// vectorised with xsimd: max, exp and the sums run over SIMD lanes, the sums in Real (every
// term is ≤ 1 after the shift) instead of the composed path's serial double sum. The row
// kernels are SimdKernels::softmax_row / softmax_row_backward (src/fast/simd_kernels.hpp) of
// the ISA in force (model.isa), taken when the op runs and kept for its backward. The two
// paths agree to float rounding on every ISA (tests/machinery/test_fused_attention.cpp).
#include "fast/fused_attention.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "fast/simd.hpp"
#include "fast/products.hpp"
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

// Where a tile's rows of q, k, v sit: three [B,T,C] tensors (row stride C), or one packed
// [B,T,3C] tensor (row stride 3C; q, k, v begin at columns 0, C, 2C of each row).
struct Operands {
    std::vector<Tensor> inputs;  // {q, k, v} or {qkv}
    size_t which[3];             // inputs[which[i]] holds q (i = 0), k (1), v (2)
    size_t column[3];            // … beginning at this column of each row
    size_t ld;                   // the row stride of every input
    const Real* data(size_t i) const { return inputs[which[i]].data() + column[i]; }
    Real* grad(size_t i) {  // the gradient of q, k or v (nullptr: not wanted), same layout
        Array* g = grad_of(inputs[which[i]]);
        return g ? g->data() + column[i] : nullptr;
    }
};

// A tile's product: OpenBLAS's gemm() for tiles under 256 positions, whose small-matrix
// kernels were faster there than oneDNN's; from 256 on, block_gemm() — the library
// model.products chose (docs/performance.md, "Where it stands", change 4).
constexpr size_t kLibraryTileLength = 256;
inline void tile_gemm(size_t T, bool ta, bool tb, size_t M, size_t N, size_t K, const Real* A,
                      size_t lda, const Real* B, size_t ldb, Real beta, Real* C, size_t ldc) {
    if (T >= kLibraryTileLength)
        block_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
    else
        blas_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

// ctx_h = softmax(R q_h·(R k_h)ᵀ/√D) · v_h per tile   q,k,v:[B,T,C] (in place) → ctx:[B,T,C]
Tensor attention_tiles(Operands in, size_t B, size_t T, size_t C, size_t H, RopeTable* table,
                       bool causal) {
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
            for (size_t t = 0; t < T; ++t) {
                const Real* cos_t = table->cos_row(t);
                const Real* sin_t = table->sin_row(t);
                for (size_t i = 0; i < half; ++i) {
                    const Real c = cos_t[i], sn = sin_t[i];
                    const size_t at = t * 2 * half + 2 * i;
                    rot->cos[at] = rot->cos[at + 1] = c;
                    rot->sin[at] = -sn;
                    rot->sin[at + 1] = sn;
                }
            }
        } else {
            rot->cos.assign(table->cos_row(0), table->cos_row(0) + T * half);
            rot->sin.assign(table->sin_row(0), table->sin_row(0) + T * half);
        }
    }
    const SimdKernels* kernels = &simd_kernels();
    const Real scale = Real(1.0 / std::sqrt(double(D)));
    // every tile's [T,T] block is written whole below (scores, then softmax_row over all T
    // columns), so no zero-fill pass first: 8 MiB a layer on bench.toml
    auto probs = std::make_shared<Array>(Array::from_shape({B * H * T * T}));
    Array out = Array::from_shape({B, T, C});

    const size_t ld = in.ld;
    const Real* Q = in.data(0);
    const Real* K = in.data(1);
    const Real* V = in.data(2);
    Real* P = probs->data();
    Real* O = out.data();
    for_each_product(B * H, 4 * T * T * D, [&](size_t tile) {
        thread_local std::vector<Real> q_buf, k_buf;
        const size_t b = tile / H, h = tile % H;
        const size_t base = b * T * ld + h * D, out_base = b * T * C + h * D;
        Real* qt = scratch(q_buf, T * D);
        Real* kt = scratch(k_buf, T * D);
        gather_rows(Q + base, T, D, ld, *rot, qt);
        gather_rows(K + base, T, D, ld, *rot, kt);
        Real* S = P + tile * T * T;
        tile_gemm(T, false, true, T, T, D, qt, D, kt, D, Real(0), S, T);  // scores [T,T]
        for (size_t i = 0; i < T; ++i)
            kernels->softmax_row(S + i * T, causal ? i + 1 : T, T, scale);
        tile_gemm(T, false, false, T, D, T, S, T, V + base, ld, Real(0), O + out_base,
                  C);  // ctx rows
    });

    std::vector<Tensor> parents = in.inputs;
    return make_result(
        std::move(out), parents, "fused_attention",
        [in = std::move(in), B, T, C, H, D, scale, causal, rot, probs,
         kernels](TensorImpl& o) mutable {
            // fused_attention backward, per tile (S = probs, Ŝ = dscores):
            //   dS = dctx·vᵀ [T,T]     dv += Sᵀ·dctx [T,D]     Ŝ = S ⊙ (dS − rowsum(dS ⊙ S))/√D
            //   dq += R_mᵀ(Ŝ·R k) [T,D]     dk += R_nᵀ(Ŝᵀ·R q) [T,D]
            const size_t ld = in.ld;
            Real* gq = in.grad(0);
            Real* gk = in.grad(1);
            Real* gv = in.grad(2);
            const Real* dO = o.grad.data();
            const Real* Q = in.data(0);
            const Real* K = in.data(1);
            const Real* V = in.data(2);
            const Real* P = probs->data();
            for_each_product(B * H, 8 * T * T * D, [&](size_t tile) {
                thread_local std::vector<Real> q_buf, k_buf, ds_buf, g_buf;
                const size_t b = tile / H, h = tile % H;
                const size_t base = b * T * ld + h * D, out_base = b * T * C + h * D;
                const Real* S = P + tile * T * T;
                if (gv)
                    tile_gemm(T, true, false, T, D, T, S, T, dO + out_base, C, Real(1), gv + base,
                              ld);
                if (!gq && !gk) return;
                Real* dS = scratch(ds_buf, T * T);
                tile_gemm(T, false, true, T, T, D, dO + out_base, C, V + base, ld, Real(0), dS, T);
                for (size_t i = 0; i < T; ++i)
                    kernels->softmax_row_backward(S + i * T, dS + i * T, causal ? i + 1 : T, T,
                                                  scale);
                Real* qt = scratch(q_buf, T * D);
                Real* kt = scratch(k_buf, T * D);
                Real* g = scratch(g_buf, T * D);
                gather_rows(Q + base, T, D, ld, *rot, qt);
                gather_rows(K + base, T, D, ld, *rot, kt);
                if (gq) {
                    tile_gemm(T, false, false, T, D, T, dS, T, kt, D, Real(0), g, D);  // Ŝ·R k
                    scatter_rows(g, T, D, ld, *rot, gq + base);
                }
                if (gk) {
                    tile_gemm(T, true, false, T, D, T, dS, T, qt, D, Real(0), g, D);  // Ŝᵀ·R q
                    scatter_rows(g, T, D, ld, *rot, gk + base);
                }
            });
        });
}

}  // namespace

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, size_t num_heads,
                       RopeTable* table, bool causal) {
    if (q.dim() != 3 || k.shape() != q.shape() || v.shape() != q.shape())
        throw std::invalid_argument("fused_attention: q, k, v must be one [B,T,C] shape, got " +
                                    shape_str(q.shape()) + ", " + shape_str(k.shape()) + ", " +
                                    shape_str(v.shape()));
    const size_t C = q.size(2);
    return attention_tiles({{q, k, v}, {0, 1, 2}, {0, 0, 0}, C}, q.size(0), q.size(1), C, num_heads,
                           table, causal);
}

Tensor fused_attention_packed(const Tensor& qkv, size_t num_heads, RopeTable* table, bool causal) {
    if (qkv.dim() != 3 || qkv.size(2) % 3 != 0)
        throw std::invalid_argument(
            "fused_attention_packed: qkv must be [B,T,3C] (q, k, v side by side), got " +
            shape_str(qkv.shape()));
    const size_t C = qkv.size(2) / 3;
    return attention_tiles({{qkv}, {0, 0, 0}, {0, C, 2 * C}, 3 * C}, qkv.size(0), qkv.size(1), C,
                           num_heads, table, causal);
}

}  // namespace rf
