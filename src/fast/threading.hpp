// The fast room: the process's one threading setting (threading.cpp). Not part of the math:
// which threads run a product, never what it computes (each element of a product is still one
// dot product in BLAS's order; tests/lesson/test_gemm.cpp).
#pragma once

#include <cstddef>

#include "ops/gemm.hpp"  // FloatProduct

namespace rf {

// BLAS requires every leading dimension to be ≥ 1 even when a dim is 0 (an empty product).
inline size_t gemm_leading(size_t leading) { return leading > 0 ? leading : 1; }

// How many threads our OpenMP loops and OpenBLAS use, and how one large product (linear, a
// matmul whose B is shared by the batch) uses them. Process-wide, as OpenMP's and OpenBLAS's
// pools are; model.fused (run/threads.cpp) says which setting a
// run wants, and set_threading applies it.
struct Threading {
    size_t threads = 0;  // 0 = whatever OpenMP / OpenBLAS chose at start-up (every core)
    // true: a large product's rows are split over our OpenMP threads (gemm_rows_parallel in
    // products.hpp, installed as the core's float product) and BLAS runs one thread
    // throughout, so no BLAS thread waits beside ours (threading.cpp) — the fast path's
    // choice, and the library's default; false: OpenBLAS threads each product itself — the
    // composed path's choice, so model.fused = false reproduces its numbers bit for bit.
    bool split_products = true;
    // With split_products: the float product each block runs. nullptr: blas_gemm(); the
    // fast room may install another library's (model.products, src/fast/onednn_products.hpp).
    FloatProduct block_product = nullptr;
};
// Sets OpenMP's and OpenBLAS's thread counts (threads = 0: every core) and the product split
// (split_products: the core's gemm() runs gemm_rows_parallel; else plain sgemm); returns the
// setting now in force (threads resolved to a count).
Threading set_threading(Threading setting);
const Threading& threading();  // the setting in force

}  // namespace rf
