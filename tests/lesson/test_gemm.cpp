// gemm() (src/ops/gemm.hpp, in matmul.cpp: OpenBLAS's cblas_sgemm) against the textbook triple loop: every
// transposition, row strides wider than the rows (a head's block inside a wider tensor), beta
// 0 and 1, an empty product, on 1 and 2 threads and inside our row split (gemm_rows_parallel).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fast/threading.hpp"
#include "fast/products.hpp"
#include "ops/ops.hpp"

namespace {

// Restores the threading in force when the test started.
struct ThreadingGuard {
    rf::Threading threading = rf::threading();
    ~ThreadingGuard() { rf::set_threading(threading); }
};

std::vector<float> random_values(size_t n, rf::Rng& rng) {
    std::vector<float> v(n);
    for (auto& x : v) x = float(rng.normal());
    return v;
}

// C = op(A)·op(B) + beta·C in double, element by element, on the same strided storage.
void naive_gemm(bool ta, bool tb, size_t M, size_t N, size_t K, const std::vector<float>& A,
                size_t lda, const std::vector<float>& B, size_t ldb, float beta,
                std::vector<double>& C, size_t ldc) {
    for (size_t i = 0; i < M; ++i)
        for (size_t j = 0; j < N; ++j) {
            double sum = 0;
            for (size_t k = 0; k < K; ++k)
                sum += double(ta ? A[k * lda + i] : A[i * lda + k]) *
                       double(tb ? B[j * ldb + k] : B[k * ldb + j]);
            C[i * ldc + j] = sum + double(beta) * C[i * ldc + j];
        }
}

// One product; every element of C, padding included, checked.
void check_product(bool ta, bool tb, size_t M, size_t N, size_t K, float beta, bool row_split) {
    rf::Rng rng(M * 131 + N * 17 + K + ta * 2 + tb);
    const size_t pad = 3;  // row strides wider than the rows
    const size_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
    const std::vector<float> A = random_values((ta ? K : M) * lda, rng);
    const std::vector<float> B = random_values((tb ? N : K) * ldb, rng);
    std::vector<float> C = random_values(M * ldc, rng);
    const std::vector<float> C0 = C;
    std::vector<double> expected(C.begin(), C.end());
    naive_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, expected, ldc);
    if (row_split)
        rf::gemm_rows_parallel(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
    else
        rf::gemm(ta, tb, M, N, K, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
    // Every element of C, padding included (it must be left alone): the worst one reported.
    double worst = 0;
    size_t worst_i = 0, worst_j = 0;
    for (size_t i = 0; i < M; ++i)
        for (size_t j = 0; j < ldc; ++j) {
            const double want = j < N ? expected[i * ldc + j] : double(C0[i * ldc + j]);
            // float32 sums of K products of N(0,1) values: error ~ sqrt(K)·eps·|terms|
            const double excess = std::abs(double(C[i * ldc + j]) - want) -
                                  (1e-5 * double(K + 1) + 1e-5 * std::abs(want));
            if (excess > worst) worst = excess, worst_i = i, worst_j = j;
        }
    INFO("C[" << worst_i << "," << worst_j << "] of " << M << "x" << N << "x" << K << " ta=" << ta
              << " tb=" << tb << " beta=" << beta << " split=" << row_split);
    CHECK(worst == 0);
}

}  // namespace

TEST_CASE("gemm: OpenBLAS computes op(A)·op(B) + beta·C, alone and under our row split") {
    ThreadingGuard guard;
    for (size_t threads : {1, 2}) {
        rf::set_threading({threads, true});
        CAPTURE(threads);
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                for (float beta : {0.f, 1.f}) {
                    check_product(ta, tb, 37, 29, 41, beta, false);
                    // > 4 MFLOP: the row split splits it
                    check_product(ta, tb, 300, 96, 80, beta, false);
                    check_product(ta, tb, 300, 96, 80, beta, true);
                }
        // Empty products: nothing written (M or N = 0), or C scaled by beta (K = 0).
        check_product(false, false, 0, 5, 4, 1.f, false);
        check_product(false, false, 5, 4, 0, 0.f, false);
        check_product(true, true, 6, 3, 0, 1.f, false);
    }
}

// A linear layer's bias on the threads: the rows of C set to b inside each thread's block, then
// the block's product with beta = 1; and db = Σ over rows split by columns.
// What holds on every CPU, and is checked here:
//  - the split gives exactly the bits of its blocks computed one after another on one thread
//    (the same sgemm calls on the same rows: the same bits on any CPU);
//  - the split agrees with the one-thread product of the whole to float32's rounding bound,
//    not bit for bit: OpenBLAS's kernels for some CPUs (the Haswell and Zen ones, which an
//    AVX2-only machine runs) sum a block of rows in another order than the whole product;
//  - the same setting run twice gives the same bits (the determinism rule), and one thread
//    gives the one-thread product itself;
//  - the column sums add every row in order on any split: the bits of the one-thread loop.
TEST_CASE("gemm: a bias set inside the row split, and its column sums, as on one thread") {
    ThreadingGuard guard;
    rf::Rng rng(7);
    const size_t M = 300, N = 96, K = 80, ldc = N + 3;  // > 4 MFLOP: split on 2 threads
    const std::vector<float> A = random_values(M * K, rng), B = random_values(N * K, rng);
    const std::vector<float> bias = random_values(N, rng);
    // C = bias + A·Bᵀ for rows [m0, m0 + rows), on the calling thread, one sgemm.
    const auto serial_rows = [&](std::vector<float>& C, size_t m0, size_t rows) {
        for (size_t i = m0; i < m0 + rows; ++i)
            std::copy(bias.begin(), bias.end(), C.begin() + i * ldc);
        rf::blas_gemm(false, true, rows, N, K, A.data() + m0 * K, K, B.data(), K, 1.f,
                      C.data() + m0 * ldc, ldc);
    };
    rf::set_threading({1, true});
    std::vector<float> serial(M * ldc, -1.f);
    serial_rows(serial, 0, M);
    // float32's bound for a sum of K + 1 terms (the products and the bias), each computed
    // result within γ·Σ|term| of the exact one, γ = n·u/(1 − n·u), u = 2⁻²⁴: two results
    // computed in different orders are within twice that of each other.
    const double u = std::ldexp(1.0, -24), gamma = (K + 1) * u / (1 - (K + 1) * u);
    std::vector<double> bound(M * N);
    for (size_t i = 0; i < M; ++i)
        for (size_t j = 0; j < N; ++j) {
            double magnitude = std::abs(double(bias[j]));
            for (size_t k = 0; k < K; ++k)
                magnitude += std::abs(double(A[i * K + k]) * double(B[j * K + k]));
            bound[i * N + j] = 2 * gamma * magnitude;
        }
    const size_t rows = 1000, n = 100;  // ≥ 2^16 values: split by columns on 2 threads
    const std::vector<float> Y = random_values(rows * n, rng);
    std::vector<float> serial_sums = random_values(n, rng);
    const std::vector<float> start_sums = serial_sums;
    for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < n; ++j) serial_sums[j] += Y[r * n + j];
    for (size_t threads : {1, 2})
        for (bool split : {true, false}) {
            // The threads in force: 1 whatever is asked in a build without OpenMP (openmp.hpp).
            const size_t in_force = rf::set_threading({threads, split}).threads;
            CAPTURE(threads);
            CAPTURE(in_force);
            CAPTURE(split);
            std::vector<float> C(M * ldc, -1.f), again(M * ldc, -1.f);  // padding stays -1
            rf::gemm_rows_parallel(false, true, M, N, K, A.data(), K, B.data(), K, 1.f, C.data(),
                                   ldc, bias.data());
            rf::gemm_rows_parallel(false, true, M, N, K, A.data(), K, B.data(), K, 1.f,
                                   again.data(), ldc, bias.data());
            CHECK(C == again);  // same setting, same bits
            if (in_force == 1) CHECK(C == serial);  // one block: the one-thread product itself
            if (split) {
                // The blocks products.hpp splits into, ⌈M/threads⌉ rows each, one at a time.
                std::vector<float> blocks(M * ldc, -1.f);
                const size_t block = (M + in_force - 1) / in_force;
                for (size_t m0 = 0; m0 < M; m0 += block)
                    serial_rows(blocks, m0, std::min(block, M - m0));
                CHECK(C == blocks);
            }
            double worst = 0;  // beyond the bound, against the whole product on one thread
            for (size_t i = 0; i < M; ++i)
                for (size_t j = 0; j < ldc; ++j) {
                    const double excess = j < N ? std::abs(double(C[i * ldc + j]) -
                                                           double(serial[i * ldc + j])) -
                                                      bound[i * N + j]
                                                : double(C[i * ldc + j] != -1.f);
                    worst = std::max(worst, excess);
                }
            CHECK(worst <= 0);
            std::vector<float> sums = start_sums;
            rf::add_column_sums(Y.data(), rows, n, sums.data());
            CHECK(sums == serial_sums);
        }
}
