// Room — fast: the process's one threading setting (threading.cpp). Not part of the math:
// which threads run a product, never what it computes (to float rounding: some CPUs' BLAS
// kernels sum a block of rows in another order than the whole; tests/lesson/test_gemm.cpp).
#pragma once

#include <signal.h>

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
// Sets OpenMP's and OpenBLAS's thread counts (threads = 0: every core; always 1 in a build
// without OpenMP, fast/openmp.hpp) and the product split
// (split_products: the core's gemm() runs gemm_rows_parallel; else plain sgemm); returns the
// setting now in force (threads resolved to a count).
Threading set_threading(Threading setting);
const Threading& threading();  // the setting in force

// Signals and oneDNN's kernels. oneDNN's sgemm kernels (2.6 to 3.11; oneDNN issue #4845) point
// the stack register at a heap buffer while they run, so a signal handled on that thread —
// a run's Ctrl-C (run/interrupt.cpp) — writes its frame into the heap and corrupts it. Hence:
// set_threading blocks every asynchronous signal in the OpenMP pool's workers, so that only
// the main thread takes one, and the main thread holds them back (a HoldSignals) for the
// length of each product of an installed library (block_gemm, products.hpp: oneDNN's sgemm
// and bf16 matmul); a signal that arrives meanwhile is handled when the product returns.
class HoldSignals {
public:
    HoldSignals();   // blocks every asynchronous signal in this thread
    ~HoldSignals();  // restores the thread's mask as it was
    HoldSignals(const HoldSignals&) = delete;
    HoldSignals& operator=(const HoldSignals&) = delete;

private:
    sigset_t before_;
};

}  // namespace rf
