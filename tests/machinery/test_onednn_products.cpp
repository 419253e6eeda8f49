// model.products = onednn (src/fast/onednn_products.hpp): the fast path's block products in
// oneDNN. Each product against OpenBLAS's (transposes, beta, strides, split over threads);
// whole models trained a few steps with either library and with the composed ops; the same
// setting twice gives the same bits; what auto installs; the refusals; the signal masks that
// keep a signal out of oneDNN's kernels.
#include <doctest/doctest.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "fast/openmp.hpp"
#include "config/config.hpp"
#include "error_of.hpp"
#include "fast/fused_attention.hpp"
#include "fast/onednn_products.hpp"
#include "model/roformer.hpp"
#include "model_pairs.hpp"
#include "nn/adamw.hpp"
#include "fast/products.hpp"
#include "fast/threading.hpp"
#include "run/threads.hpp"
#include "tensor/random.hpp"
#include "tiny_model.hpp"

using namespace rf;
using rf::testing::contains;
using rf::testing::error_of;

namespace {

// max |a − b| / (1 + max |b|)
double gap(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, double(std::fabs(a[i] - b[i])));
        scale = std::max(scale, double(std::fabs(b[i])));
    }
    return diff / (1 + scale);
}

// Restores the process's threading setting when a test ends.
struct KeepThreading {
    Threading before = threading();
    ~KeepThreading() { set_threading(before); }
};

std::vector<float> random_values(size_t n, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (float& x : v) x = float(rng.normal());
    return v;
}

}  // namespace

TEST_CASE("model.products = onednn: every product form equals OpenBLAS's, split or not") {
    if (!onednn_built()) {
        CHECK(contains(error_of([] { onednn_product(); }), "libdnnl-dev"));
        return;
    }
    const KeepThreading keep;
    struct Case {
        bool ta, tb;
        size_t M, N, K, extra_ld;  // extra_ld: each leading dimension this much wider
        float beta;
    };
    const std::vector<Case> cases = {
        {false, true, 700, 96, 64, 0, 0.f}, {false, false, 700, 64, 96, 5, 0.f},
        {true, false, 96, 64, 700, 3, 1.f}, {false, false, 9, 7, 5, 0, 1.f},
        {true, true, 33, 17, 29, 2, 0.5f},  {false, true, 1, 1, 1, 0, 0.f}};
    for (const size_t threads : {size_t(1), size_t(2)}) {
        for (const Case& c : cases) {
            CAPTURE(threads);
            CAPTURE(c.M);
            CAPTURE(c.ta);
            CAPTURE(c.tb);
            const size_t rows_a = c.ta ? c.K : c.M, cols_a = c.ta ? c.M : c.K;
            const size_t rows_b = c.tb ? c.N : c.K, cols_b = c.tb ? c.K : c.N;
            const size_t lda = cols_a + c.extra_ld, ldb = cols_b + c.extra_ld,
                         ldc = c.N + c.extra_ld;
            const std::vector<float> A = random_values(rows_a * lda, 1),
                                     B = random_values(rows_b * ldb, 2),
                                     C0 = random_values(c.M * ldc, 3);
            std::vector<float> with_openblas = C0, with_onednn = C0;
            set_threading({threads, true, nullptr});
            gemm_rows_parallel(c.ta, c.tb, c.M, c.N, c.K, A.data(), lda, B.data(), ldb, c.beta,
                               with_openblas.data(), ldc);
            set_threading({threads, true, onednn_product()});
            gemm_rows_parallel(c.ta, c.tb, c.M, c.N, c.K, A.data(), lda, B.data(), ldb, c.beta,
                               with_onednn.data(), ldc);
            CHECK(gap(with_onednn, with_openblas) < 1e-5);
            for (size_t i = 0; i < c.M; ++i)  // the padding past N is never written
                for (size_t j = c.N; j < ldc; ++j)
                    CHECK(with_onednn[i * ldc + j] == C0[i * ldc + j]);
        }
    }
}

TEST_CASE("model.products: auto installs oneDNN's product where built, openblas nothing") {
    const KeepThreading keep;
    Config config = default_config();
    CHECK(config.fast.products == ProductLibrary::automatic);
    apply_threading(config, 2);
    CHECK((threading().block_product == (onednn_built() ? onednn_product() : nullptr)));
    CHECK(contains(fast_path_line(config.fast), onednn_built() ? "oneDNN" : "OpenBLAS"));
    config.fast.products = ProductLibrary::openblas;
    apply_threading(config, 2);
    CHECK((threading().block_product == nullptr));
    config.fast.products = ProductLibrary::automatic;
    config.fast.fused = false;  // the composed path multiplies with OpenBLAS whatever auto finds
    apply_threading(config, 2);
    CHECK((threading().block_product == nullptr));
    config.fast.fused = true;
    if (!onednn_built()) return;
    config.fast.products = ProductLibrary::onednn;
    apply_threading(config, 2);
    CHECK((threading().block_product == onednn_product()));
    CHECK(contains(fast_path_line(config.fast), "oneDNN"));
    config.fast.fused = false;  // (refused by validation; here: the composed path stays OpenBLAS)
    apply_threading(config, 2);
    CHECK((threading().block_product == nullptr));
}

TEST_CASE("model.products = onednn trains like openblas and the composed ops; same bits twice") {
    if (!onednn_built()) return;
    const KeepThreading keep;
    const size_t B = 3, T = 12, V = 40;
    std::vector<int> ids(B * T), labels(B * T, -100);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(5 + (i * 11) % (V - 5));
    for (size_t i = 0; i < ids.size(); i += 3) labels[i] = int(5 + (i * 7) % (V - 5));
    const PositionConfig position = testing::tiny_position_config("rope");
    const ModelConfig config = testing::tiny_model_config(V);
    const FastConfig fused;
    FastConfig composed_path;
    composed_path.fused = false;
    // Three losses and a final parameter vector per way of multiplying.
    const auto train = [&](const FastConfig& fast, FloatProduct product) {
        set_threading({2, fast.fused, product});
        RoFormer model = assembled_model(config, position, 21, fast);
        AdamW opt(model.parameters(), {});
        std::vector<float> trace;
        for (int step = 0; step < 3; ++step) {
            ModelOutput out = model.forward(ids, labels, B, T, true);
            trace.push_back(out.loss.item());
            opt.zero_grad();
            out.loss.backward();
            opt.step(1e-3);
        }
        for (const NamedParameter& p : model.parameters())
            trace.insert(trace.end(), p.tensor.value().begin(), p.tensor.value().end());
        return trace;
    };
    const std::vector<float> onednn = train(fused, onednn_product());
    const std::vector<float> again = train(fused, onednn_product());
    const std::vector<float> openblas = train(fused, nullptr);
    const std::vector<float> composed = train(composed_path, nullptr);
    CHECK(onednn == again);  // deterministic: same setting, same threads, same bits
    CHECK(gap(onednn, openblas) < 1e-4);
    CHECK(gap(onednn, composed) < 1e-4);
}

TEST_CASE("model.products = onednn is refused with model.fused = false, naming both keys") {
    const std::string error = error_of([] {
        load_config(std::nullopt, {"model.products=onednn", "model.fused=false"});
    });
    CHECK(contains(error, "model.products"));
    CHECK(contains(error, onednn_built() ? "model.fused" : "libdnnl-dev"));
    CHECK(contains(error_of([] { load_config(std::nullopt, {"model.products=mkl"}); }),
                   "openblas, onednn"));
}

TEST_CASE("model.products = onednn: attention tiles of 256 positions equal OpenBLAS's") {
    if (!onednn_built()) return;
    const KeepThreading keep;
    const size_t B = 1, T = 256, C = 16, H = 2;  // the tiles' products go to oneDNN from T = 256
    Rng rng(3);
    const auto tensor = [&] {
        Array a = Array::from_shape({B, T, C});
        for (Real& x : a) x = Real(rng.normal());
        return Tensor(a, true);
    };
    const Tensor q = tensor(), k = tensor(), v = tensor();
    Array dout = Array::from_shape({B, T, C});
    for (Real& x : dout) x = Real(rng.normal());
    std::vector<std::vector<float>> results;
    for (const FloatProduct product : {FloatProduct(nullptr), onednn_product()}) {
        set_threading({2, true, product});
        for (const Tensor& t : {q, k, v}) Tensor(t).zero_grad();
        Tensor out = fused_attention(q, k, v, H, nullptr, false);
        out.backward(dout);
        std::vector<float> all(out.value().begin(), out.value().end());
        for (const Tensor& t : {q, k, v})
            all.insert(all.end(), Tensor(t).grad().begin(), Tensor(t).grad().end());
        results.push_back(all);
    }
    CHECK(gap(results[1], results[0]) < 1e-5);
}

// oneDNN's sgemm kernels borrow the stack register for a heap buffer (threading.hpp,
// HoldSignals): a signal handled by a thread inside one corrupts the heap (a Ctrl-C during
// training aborted with "corrupted size vs. prev_size" before this). The run-level proof is
// tests/machinery/cli_run_safety.sh, which stops a default (oneDNN) run with SIGINT and SIGTERM;
// here, the masks that keep signals out of those kernels.
TEST_CASE("signals: the pool's workers block them; HoldSignals holds them on the main thread") {
    const KeepThreading keep;
    set_threading({2, true, nullptr});
    const auto blocks = [](int sig) {
        sigset_t now;
        pthread_sigmask(SIG_BLOCK, nullptr, &now);
        return sigismember(&now, sig) == 1;
    };
    std::vector<int> interrupt_blocked(2, -1), fault_blocked(2, -1);
#pragma omp parallel num_threads(2)
    {
        const int t = omp_get_thread_num();
        interrupt_blocked[size_t(t)] = blocks(SIGINT) && blocks(SIGTERM);
        fault_blocked[size_t(t)] = blocks(SIGSEGV);
    }
    CHECK(interrupt_blocked[0] == 0);  // the main thread takes a run's Ctrl-C
    CHECK(interrupt_blocked[1] == 1);  // a worker never does
    CHECK(fault_blocked[1] == 0);      // a fault of the worker's own is still its own
    REQUIRE(!blocks(SIGINT));
    {
        const HoldSignals held;
        CHECK(blocks(SIGINT));
        CHECK(blocks(SIGHUP));
        CHECK(!blocks(SIGSEGV));
    }
    CHECK(!blocks(SIGINT));  // restored as it was
}
