// Room — fast: the large products in oneDNN (see onednn_products.hpp).
#include "fast/onednn_products.hpp"

#include <stdexcept>

#ifdef RF_HAVE_ONEDNN
#include <dnnl.h>
#endif

namespace rf {

#ifdef RF_HAVE_ONEDNN
namespace {

// C[M,N] = op(A)·op(B) + beta·C, row-major, as ops/gemm.hpp's gemm(). Inside our split's
// parallel loop oneDNN runs one thread (OpenMP's nested regions are off); called outside it
// (a product too small to split) it uses the run's threads.
void dnnl_product(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A,
                  size_t lda, const float* B, size_t ldb, float beta, float* C, size_t ldc) {
    const dnnl_status_t status =
        dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', dnnl_dim_t(M), dnnl_dim_t(N),
                   dnnl_dim_t(K), 1.0f, A, dnnl_dim_t(gemm_leading(lda)), B,
                   dnnl_dim_t(gemm_leading(ldb)), beta, C, dnnl_dim_t(gemm_leading(ldc)));
    if (status != dnnl_success)  // not for an empty product: block_gemm answers those
        throw std::runtime_error("dnnl_sgemm refused a " + std::to_string(M) + "×" +
                                 std::to_string(N) + "×" + std::to_string(K) + " product (status " +
                                 std::to_string(int(status)) +
                                 "); rerun with model.products = openblas");
}

}  // namespace

bool onednn_built() { return true; }

std::string onednn_description() {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + " (dnnl_sgemm)";
}

FloatProduct onednn_product() { return &dnnl_product; }

#else

bool onednn_built() { return false; }

std::string onednn_description() { return "oneDNN: not in this build"; }

FloatProduct onednn_product() {
    throw std::invalid_argument(
        "model.products = onednn: this build has no oneDNN; install libdnnl-dev "
        "(scripts/setup.sh does) and rebuild, or use model.products = openblas");
}

#endif

}  // namespace rf
