// Stage 2 — ops: matrix products through cblas gemm (matmul, batched matmul, linear).
//
// Legend:  M, K, N  product dims: op(A):[M,K] · op(B):[K,N] → C:[M,N]
//          batch    product of the leading dims ("..." below)
//          op(X)    X or Xᵀ, chosen by a gemm transpose flag — a transpose is never copied
//
// Every backward product is one more gemm that ACCUMULATES into the gradient buffer
// (beta = 1), so fan-out needs no temporary. A batch of products is a loop of gemm calls,
// one per product, each on its own slice.
#include <cblas.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/gemm.hpp"
#include "ops/ops.hpp"

namespace rf {

// ---- gemm: the one call into BLAS (ops/gemm.hpp) ------------------------------------------
static FloatProduct g_float_product = nullptr;  // the fast path's, when it installed one
void set_float_product(FloatProduct product) { g_float_product = product; }

static int leading(size_t ld) { return int(std::max<size_t>(ld, 1)); }  // BLAS wants ≥ 1
static CBLAS_TRANSPOSE op(bool transposed) { return transposed ? CblasTrans : CblasNoTrans; }

void gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A, size_t lda,
          const float* B, size_t ldb, float beta, float* C, size_t ldc) {
    if (g_float_product)
        return g_float_product(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
    cblas_sgemm(CblasRowMajor, op(trans_a), op(trans_b), int(M), int(N), int(K), 1.0f, A,
                leading(lda), B, leading(ldb), beta, C, leading(ldc));
}
void gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const double* A, size_t lda,
          const double* B, size_t ldb, double beta, double* C, size_t ldc) {
    cblas_dgemm(CblasRowMajor, op(trans_a), op(trans_b), int(M), int(N), int(K), 1.0, A,
                leading(lda), B, leading(ldb), beta, C, leading(ldc));
}

namespace {

// Where one product's operands sit. A is stored [M,K] (or [K,M] when trans_a), B is stored
// [K,N] (or [N,K] when trans_b); the leading dims give the row strides.
struct ProductShape {
    size_t batch = 1, M = 0, K = 0, N = 0;
    bool trans_a = false, trans_b = false;
    bool shared_b = false;  // B is 2-D and used by every batch element
    size_t lda() const { return trans_a ? M : K; }
    size_t ldb() const { return trans_b ? K : N; }
};

ProductShape product_shape(const Shape& sa, const Shape& sb, bool trans_a, bool trans_b) {
    auto fail = [&](const std::string& why) {
        return std::invalid_argument("matmul: " + why + " (A " + shape_str(sa) +
                                     (trans_a ? "ᵀ" : "") + ", B " + shape_str(sb) +
                                     (trans_b ? "ᵀ" : "") + ")");
    };
    if (sa.size() < 2 || sb.size() < 2) throw fail("both operands need at least 2 dims");
    ProductShape p;
    p.trans_a = trans_a;
    p.trans_b = trans_b;
    const size_t ra = sa.size(), rb = sb.size();
    p.M = trans_a ? sa[ra - 1] : sa[ra - 2];
    p.K = trans_a ? sa[ra - 2] : sa[ra - 1];
    const size_t kb = trans_b ? sb[rb - 1] : sb[rb - 2];
    p.N = trans_b ? sb[rb - 2] : sb[rb - 1];
    if (p.K != kb)
        throw fail("inner dims differ: " + std::to_string(p.K) + " vs " + std::to_string(kb));
    if (rb == 2) {
        p.shared_b = ra > 2;
    } else if (ra != rb || !std::equal(sa.begin(), sa.end() - 2, sb.begin())) {
        throw fail("leading (batch) dims must be identical, or B must be 2-D");
    }
    for (size_t i = 0; i + 2 < ra; ++i) p.batch *= sa[i];
    return p;
}

// dop(A) += dC·op(B)ᵀ into A's stored layout, for one product (see matmul_backward).
void accumulate_grad_a(const ProductShape& p, size_t M, const Real* dC, const Real* B, Real* dA) {
    if (!p.trans_a)
        gemm(false, !p.trans_b, M, p.K, p.N, dC, p.N, B, p.ldb(), Real(1), dA, p.K);  // [M,K]
    else
        gemm(p.trans_b, true, p.K, M, p.N, B, p.ldb(), dC, p.N, Real(1), dA, M);  // [K,M]
}
// dop(B) += op(A)ᵀ·dC into B's stored layout, for one product.
void accumulate_grad_b(const ProductShape& p, size_t M, const Real* A, size_t lda, const Real* dC,
                       Real* dB) {
    if (!p.trans_b)
        gemm(!p.trans_a, false, p.K, p.N, M, A, lda, dC, p.N, Real(1), dB, p.N);  // [K,N]
    else
        gemm(true, p.trans_a, p.N, p.K, M, dC, p.N, A, lda, Real(1), dB, p.K);  // [N,K]
}

}  // namespace

// ---- matmul -------------------------------------------------------------------------------
// C = op(A)·op(B)   A:[...,M,K] (ᵀ: [...,K,M])  B:[...,K,N] or [K,N] (ᵀ: [N,K])  → C:[...,M,N]
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
    const Shape sa = a.shape(), sb = b.shape();
    const ProductShape p = product_shape(sa, sb, trans_a, trans_b);
    Shape out_shape(sa.begin(), sa.end() - 2);
    out_shape.push_back(p.M);
    out_shape.push_back(p.N);
    Array out = Array::from_shape(out_shape);

    const Real* A = a.data();
    const Real* B = b.data();
    Real* C = out.data();
    const size_t a_step = p.M * p.K, b_step = p.shared_b ? 0 : p.K * p.N, c_step = p.M * p.N;
    if (p.shared_b && !trans_a) {
        // [batch·M, K]·op(B): the batch folds into the rows of one large product.
        gemm(false, trans_b, p.batch * p.M, p.N, p.K, A, p.K, B, p.ldb(), Real(0), C, p.N);
    } else {
        for (size_t i = 0; i < p.batch; ++i)
            gemm(trans_a, trans_b, p.M, p.N, p.K, A + i * a_step, p.lda(), B + i * b_step, p.ldb(),
                 Real(0), C + i * c_step, p.N);
    }

    return make_result(std::move(out), {a, b}, "matmul", [a = a, b = b, p](TensorImpl& o) mutable {
        // matmul backward: dop(A) += dC·op(B)ᵀ   dop(B) += op(A)ᵀ·dC   (per product, beta = 1)
        const Real* dC = o.grad.data();
        Array* ga = grad_of(a);
        Array* gb = grad_of(b);
        Real* dA = ga ? ga->data() : nullptr;
        Real* dB = gb ? gb->data() : nullptr;
        const Real* A = a.data();
        const Real* B = b.data();
        const size_t a_step = p.M * p.K, b_step = p.K * p.N, c_step = p.M * p.N;
        if (p.shared_b && !p.trans_a) {
            // Folded as in the forward: one [batch·M]-row product each.
            const size_t rows = p.batch * p.M;
            if (dA) accumulate_grad_a(p, rows, dC, B, dA);
            if (dB) accumulate_grad_b(p, rows, A, p.K, dC, dB);
        } else if (p.shared_b) {
            // Aᵀ stored per batch: dA slices are independent; dB sums over the batch in order.
            if (dA)
                for (size_t i = 0; i < p.batch; ++i)
                    accumulate_grad_a(p, p.M, dC + i * c_step, B, dA + i * a_step);
            if (dB)
                for (size_t i = 0; i < p.batch; ++i)
                    accumulate_grad_b(p, p.M, A + i * a_step, p.lda(), dC + i * c_step, dB);
        } else {
            for (size_t i = 0; i < p.batch; ++i) {
                if (dA) accumulate_grad_a(p, p.M, dC + i * c_step, B + i * b_step, dA + i * a_step);
                if (dB)
                    accumulate_grad_b(p, p.M, A + i * a_step, p.lda(), dC + i * c_step,
                                      dB + i * b_step);
            }
        }
    });
}

// ---- linear -------------------------------------------------------------------------------
// y = x·Wᵀ + b   x:[...,in] → rows R = prod(...), W:[out,in], b:[out] (optional) → y:[...,out]
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
    const Shape sx = x.shape(), sw = weight.shape();
    if (sx.empty() || sw.size() != 2 || sx.back() != sw[1])
        throw std::invalid_argument("linear: x " + shape_str(sx) +
                                    " needs its last dim = in of weight " + shape_str(sw) +
                                    " ([out, in])");
    const size_t in = sw[1], out_features = sw[0];
    size_t rows = 1;
    for (size_t i = 0; i + 1 < sx.size(); ++i) rows *= sx[i];
    if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out_features))
        throw std::invalid_argument("linear: bias " + shape_str(bias.shape()) + " must be [" +
                                    std::to_string(out_features) + "] for weight " + shape_str(sw));
    Shape out_shape(sx.begin(), sx.end() - 1);
    out_shape.push_back(out_features);
    Array y = Array::from_shape(out_shape);
    // y's rows start as b and the product is added to them (beta = 1), or it overwrites them
    const Real* b = bias.defined() ? bias.data() : nullptr;
    if (b)
        for (size_t r = 0; r < rows; ++r) std::copy(b, b + out_features, y.data() + r * out_features);
    gemm(false, true, rows, out_features, in, x.data(), in, weight.data(), in, Real(b ? 1 : 0),
         y.data(), out_features);

    std::vector<Tensor> parents{x, weight};
    if (bias.defined()) parents.push_back(bias);
    return make_result(
        std::move(y), parents, "linear",
        [x = x, weight = weight, bias = bias, rows, in, out_features](TensorImpl& o) mutable {
            // linear backward: dx += dy·W [R,in]   dW += dyᵀ·x [out,in]   db += Σ_rows dy [out]
            const Real* dY = o.grad.data();
            if (Array* gx = grad_of(x))
                gemm(false, false, rows, in, out_features, dY, out_features, weight.data(), in,
                     Real(1), gx->data(), in);
            if (Array* gw = grad_of(weight))
                gemm(true, false, out_features, in, rows, dY, out_features, x.data(), in, Real(1),
                     gw->data(), in);
            if (Array* gb = grad_of(bias)) {  // rows added in order 0, 1, … for every column
                Real* db = gb->data();
                for (size_t r = 0; r < rows; ++r)
                    for (size_t j = 0; j < out_features; ++j) db[j] += dY[r * out_features + j];
            }
        });
}

}  // namespace rf
