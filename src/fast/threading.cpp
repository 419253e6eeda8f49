// Room — fast: the process's one threading setting (see threading.hpp, Threading).
#include <cblas.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <thread>

#include "fast/openmp.hpp"
#include "fast/threading.hpp"
#include "fast/products.hpp"

namespace rf {

static Threading g_threading;  // the setting in force; split_products on until set

// Every signal but those a thread raises on itself by a fault (and SIGKILL, SIGSTOP, which no
// mask holds): the asynchronous ones, which the kernel may hand to any thread not blocking them.
// Made once: HoldSignals runs for every product block.
static const sigset_t& async_signals() {
    static const sigset_t set = [] {
        sigset_t s;
        sigfillset(&s);
        for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS})
            sigdelset(&s, fault);
        return s;
    }();
    return set;
}

HoldSignals::HoldSignals() { pthread_sigmask(SIG_BLOCK, &async_signals(), &before_); }
HoldSignals::~HoldSignals() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }

// The core's float product on the fast path: gemm() with C's rows split over the threads.
static void row_split_product(bool trans_a, bool trans_b, size_t M, size_t N, size_t K,
                              const float* A, size_t lda, const float* B, size_t ldb, float beta,
                              float* C, size_t ldc) {
    gemm_rows_parallel(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

// One thread pool: OpenMP's. With split_products (the fast path) our loops split every large
// product themselves, so OpenBLAS (Debian's pthreads build) is held to one thread and never
// hands work to a worker of its own, which would otherwise wait beside ours, spinning in and
// out of the kernel (docs/performance.md, "One thread pool"). The composed path lets OpenBLAS
// thread its products as it always did, so its numbers do not move. OpenBLAS's OpenMP build
// (openblas_get_parallel() == 2, -DRF_OPENBLAS_OPENMP=ON) already runs on our pool and is
// single-threaded inside our loops; its openblas_set_num_threads would set OpenMP's count, so
// it is left to follow OpenMP's.
Threading set_threading(Threading setting) {
    if (setting.threads == 0) setting.threads = std::max(1u, std::thread::hardware_concurrency());
    if (!kOpenMP) setting.threads = 1;  // a build without OpenMP: one thread, whatever was asked
    omp_set_num_threads(static_cast<int>(setting.threads));
    // The pool's workers (made now, if not yet) never take an asynchronous signal: the main
    // thread does (see HoldSignals, threading.hpp).
#pragma omp parallel
    if (omp_get_thread_num() != 0) pthread_sigmask(SIG_BLOCK, &async_signals(), nullptr);
    if (openblas_get_parallel() == 1)
        openblas_set_num_threads(setting.split_products ? 1 : static_cast<int>(setting.threads));
    set_float_product(setting.split_products ? row_split_product : nullptr);
    g_threading = setting;
    return g_threading;
}

const Threading& threading() { return g_threading; }

}  // namespace rf
