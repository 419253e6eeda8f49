// Benchmark: OpenBLAS's sgemm at the model's own shapes (float32), on one thread and on two
// threaded two ways. Our matmul op against raw sgemm: bench_matmul_op.cpp.
//
//   build/tests/bench_matmul             every table below (~2 minutes on 2 idle cores)
//   build/tests/bench_matmul --machine   the CPU and the BLAS library, one line each
//   build/tests/bench_matmul --peak      the sgemm peak (scripts/bench.sh): the best 2-thread
//                                        GFLOP/s of the wide products, OpenBLAS and oneDNN
//   --reps N                             repetitions per median (default 7)
//   --only TEXT                          only the table's rows whose name holds TEXT
//
// 1. "sgemm, OpenBLAS": each product of the presets' layers, configs/bench.toml
//    (C = 128, FFN 512) and configs/bench_long.toml (C = 256, FFN 1024), 4096 token rows:
//      fwd  C[M,N] = A[M,K]·B[K,N]     dA = dC·Bᵀ     dB = Aᵀ·dC
//    q, k, v as one [C, 3C] product, the tied decoder logits[4096, 2048] = H·Eᵀ with its two
//    backward products, and attention's 128 small products (32 sequences × 4 heads, T = 128,
//    head size 32): S = Q·Kᵀ, dQ = dS·K, dK = dSᵀ·Q.
//    Columns: 1 thread; 2 threads, OpenBLAS threading the product itself ("own":
//    openblas_set_num_threads(2)) and under our split ("split": C's rows in two blocks over
//    our OpenMP threads, OpenBLAS on one thread in its block — gemm_rows_parallel's way; for
//    attention, the 128 products over the threads — for_each_product's way).
//    Every cell: the median of N repetitions, interleaved (one of each cell of a row in turn),
//    so a busy moment of a shared machine hits every cell alike.
// 2. "sgemm, oneDNN" (a build with libdnnl-dev), 2 threads: dnnl_sgemm threading itself, under
//    our split (model.products = onednn), its matmul primitive (made outside the timing).
// GFLOP/s = 2·M·N·K·batch / wall seconds. Run it on an otherwise idle machine, or say the
// load beside the numbers (docs/performance.md, "What the fast path does", item 2).
#include <cblas.h>

#ifdef RF_HAVE_ONEDNN
#include <dnnl.h>

#include "fast/openmp.hpp"
#include "fast/onednn_compat.hpp"
constexpr const char* kLibraries = "OpenBLAS, oneDNN";  // what --peak tries
#else
constexpr const char* kLibraries = "OpenBLAS only: this build has no oneDNN";
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fast/products.hpp"
#include "ops/ops.hpp"

using rf::Real;
using rf::Tensor;

namespace {

int g_reps = 7;
std::string g_only;  // --only: a row name must contain it

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---- the machine -----------------------------------------------------------------------

std::string cpuinfo_field(const std::string& key) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.compare(0, key.size(), key) == 0 && line.find(':') != std::string::npos) {
            std::string v = line.substr(line.find(':') + 1);
            return v.substr(v.find_first_not_of(" \t") == std::string::npos
                                ? v.size()
                                : v.find_first_not_of(" \t"));
        }
    return "";
}

std::string widest_isa() {
    std::istringstream flags(cpuinfo_field("flags"));
    std::set<std::string> have;
    for (std::string f; flags >> f;) have.insert(f);
    if (have.count("avx512f")) return "avx512";
    if (have.count("avx2") && have.count("fma")) return "avx2";
    if (have.count("avx")) return "avx";
    return have.count("sse2") ? "sse2" : "unknown";
}

void print_machine() {
    std::printf("cpu: %s (family %s, model %s), widest ISA %s, %d OpenMP threads\n",
                cpuinfo_field("model name").c_str(), cpuinfo_field("cpu family").c_str(),
                cpuinfo_field("model\t").c_str(), widest_isa().c_str(), omp_get_max_threads());
    std::printf("blas: %s, core %s\n", openblas_get_config(), openblas_get_corename());
}

// ---- section 1: sgemm, OpenBLAS ------------------------------------------------------------

struct Product {  // C[M,N] (+)= op(A)·op(B), A stored [M,K] or [K,M], B [K,N] or [N,K]
    std::string name;
    size_t M, N, K;
    bool ta, tb;
    size_t batch = 1;  // > 1: `batch` independent products of this shape (attention)
    double flops() const { return 2.0 * double(M) * N * K * batch; }
};

// 1 thread; 2 threads by OpenBLAS; 2 by our split; oneDNN's 2 threads, split, primitive.
enum class Mode { one, own, split, dnnl_own, dnnl_split, dnnl_primitive };

struct Operands {
    std::vector<float> a, b, c;
    explicit Operands(const Product& p)
        : a(p.M * p.K * p.batch), b(p.K * p.N * p.batch), c(p.M * p.N * p.batch) {
        rf::Rng rng(7);
        for (auto& x : a) x = float(rng.normal());
        for (auto& x : b) x = float(rng.normal());
    }
};

// Rows [m0, m0 + rows) of the product (one matrix of a batch) on the given operands.
void rows_gemm(const Product& p, size_t m0, size_t rows, const float* A, const float* B, float* C) {
    const size_t lda = p.ta ? p.M : p.K, ldb = p.tb ? p.K : p.N;
    const float* a = p.ta ? A + m0 : A + m0 * lda;  // row m0 of op(A)
    cblas_sgemm(CblasRowMajor, p.ta ? CblasTrans : CblasNoTrans, p.tb ? CblasTrans : CblasNoTrans,
                int(rows), int(p.N), int(p.K), 1.f, a, int(lda), B, int(ldb), 0.f, C + m0 * p.N,
                int(p.N));
}

#ifdef RF_HAVE_ONEDNN
void dnnl_rows(const Product& p, size_t m0, size_t rows, const float* A, const float* B, float* C) {
    const size_t lda = p.ta ? p.M : p.K, ldb = p.tb ? p.K : p.N;
    const float* a = p.ta ? A + m0 : A + m0 * lda;
    dnnl_sgemm(p.ta ? 'T' : 'N', p.tb ? 'T' : 'N', dnnl_dim_t(rows), dnnl_dim_t(p.N),
               dnnl_dim_t(p.K), 1.f, a, dnnl_dim_t(lda), B, dnnl_dim_t(ldb), 0.f, C + m0 * p.N,
               dnnl_dim_t(p.N));
}

// oneDNN's matmul primitive for one product shape (a batch as its batch dimension), made once;
// a transposed operand is the same memory read through swapped strides.
struct DnnlPrimitive {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    dnnl::memory::desc a, b, c;
    dnnl::matmul matmul;
    explicit DnnlPrimitive(const Product& p) {
        using dims = dnnl::memory::dims;
        const auto f32 = dnnl::memory::data_type::f32;
        const dnnl::memory::dim batch = dnnl::memory::dim(p.batch), M = p.M, N = p.N, K = p.K;
        a = dnnl::memory::desc({batch, M, K}, f32, p.ta ? dims{M * K, 1, M} : dims{M * K, K, 1});
        b = dnnl::memory::desc({batch, K, N}, f32, p.tb ? dims{K * N, 1, K} : dims{K * N, N, 1});
        c = dnnl::memory::desc({batch, M, N}, f32, dims{M * N, N, 1});
        matmul = dnnl::matmul(rf::matmul_descriptor(engine, a, b, c));
    }
    void run(Operands& o) {
        dnnl::memory am(a, engine, o.a.data()), bm(b, engine, o.b.data()),
            cm(c, engine, o.c.data());
        matmul.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
        stream.wait();
    }
};
std::unique_ptr<DnnlPrimitive> g_primitive;  // the current product's (time_cells makes it)
#endif

void run_product(Mode mode, const Product& p, Operands& o) {
    const size_t sa = p.M * p.K, sb = p.K * p.N, sc = p.M * p.N;
#ifdef RF_HAVE_ONEDNN
    if (mode == Mode::dnnl_primitive) {
        g_primitive->run(o);
        return;
    }
    if (mode == Mode::dnnl_own) {
        omp_set_num_threads(2);
        for (size_t i = 0; i < p.batch; ++i)
            dnnl_rows(p, 0, p.M, o.a.data() + i * sa, o.b.data() + i * sb, o.c.data() + i * sc);
        return;
    }
    if (mode == Mode::dnnl_split) {
        if (p.batch > 1) {
#pragma omp parallel for num_threads(2) schedule(static)
            for (long i = 0; i < long(p.batch); ++i)
                dnnl_rows(p, 0, p.M, o.a.data() + i * sa, o.b.data() + i * sb, o.c.data() + i * sc);
            return;
        }
        const size_t block = (p.M + 1) / 2;
#pragma omp parallel for num_threads(2) schedule(static)
        for (int t = 0; t < 2; ++t) {
            const size_t m0 = std::min(p.M, t * block), rows = std::min(p.M, m0 + block) - m0;
            if (rows) dnnl_rows(p, m0, rows, o.a.data(), o.b.data(), o.c.data());
        }
        return;
    }
#endif
    if (mode == Mode::own || mode == Mode::one) {
        const int threads = mode == Mode::own ? 2 : 1;
        openblas_set_num_threads(threads);
        for (size_t i = 0; i < p.batch; ++i)
            rows_gemm(p, 0, p.M, o.a.data() + i * sa, o.b.data() + i * sb, o.c.data() + i * sc);
        return;
    }
    openblas_set_num_threads(1);
    if (p.batch > 1) {  // the products over the threads
#pragma omp parallel for num_threads(2) schedule(static)
        for (long i = 0; i < long(p.batch); ++i)
            rows_gemm(p, 0, p.M, o.a.data() + i * sa, o.b.data() + i * sb, o.c.data() + i * sc);
        return;
    }
    const size_t block = (p.M + 1) / 2;  // C's rows in two blocks
#pragma omp parallel for num_threads(2) schedule(static)
    for (int t = 0; t < 2; ++t) {
        const size_t m0 = std::min(p.M, t * block), rows = std::min(p.M, m0 + block) - m0;
        if (rows) rows_gemm(p, m0, rows, o.a.data(), o.b.data(), o.c.data());
    }
}

struct Cell {
    Mode mode;
    std::vector<double> seconds;      // wall seconds per call, one entry per repetition
    std::vector<double> cpu_seconds;  // the process's CPU seconds per call (all threads)
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct Rates {
    std::vector<double> wall;  // GFLOP/s per cell: the headline
    std::vector<double> cpu;   // GFLOP per CPU-second per cell (see bench_libraries)
};

// Times every cell of one product, repetitions interleaved.
Rates time_cells(const Product& p, std::vector<Cell> cells) {
    Operands o(p);
#ifdef RF_HAVE_ONEDNN
    omp_set_num_threads(2);  // the primitive takes its thread count when it is made
    g_primitive = std::make_unique<DnnlPrimitive>(p);
#endif
    const int calls = std::max(1, int(1.5e9 / p.flops()));  // ~20–40 ms a repetition
    for (auto& cell : cells) run_product(cell.mode, p, o);  // warm-up
    for (int r = 0; r < g_reps; ++r)
        for (auto& cell : cells) {
            const std::clock_t cpu_start = std::clock();
            const auto start = std::chrono::steady_clock::now();
            for (int i = 0; i < calls; ++i) run_product(cell.mode, p, o);
            cell.seconds.push_back(seconds_since(start) / calls);
            cell.cpu_seconds.push_back(double(std::clock() - cpu_start) / CLOCKS_PER_SEC / calls);
        }
    Rates rates;
    for (auto& cell : cells) {
        rates.wall.push_back(p.flops() / median(cell.seconds) * 1e-9);
        rates.cpu.push_back(p.flops() / median(cell.cpu_seconds) * 1e-9);
    }
    openblas_set_num_threads(omp_get_max_threads());
    return rates;
}

std::vector<Product> model_products() {
    std::vector<Product> all;
    auto layer = [&](const std::string& name, size_t M, size_t K, size_t N) {
        all.push_back({name + " fwd", M, N, K, false, false});
        all.push_back({name + " dA", M, K, N, false, true});  // dC[M,N]·B[K,N]ᵀ
        all.push_back({name + " dB", K, N, M, true, false});  // A[M,K]ᵀ·dC[M,N]
    };
    layer("[4096x128]*[128x128]", 4096, 128, 128);  // bench.toml: q, k, v, o
    layer("[4096x128]*[128x384]", 4096, 128, 384);  // … q, k, v as one product
    layer("[4096x128]*[128x512]", 4096, 128, 512);  // … FFN in
    layer("[4096x512]*[512x128]", 4096, 512, 128);  // … FFN out
    layer("[4096x256]*[256x256]", 4096, 256, 256);  // bench_long.toml
    layer("[4096x256]*[256x768]", 4096, 256, 768);
    layer("[4096x256]*[256x1024]", 4096, 256, 1024);
    layer("[4096x1024]*[1024x256]", 4096, 1024, 256);
    // The tied decoder: logits[M, V] = H[M, C]·E[V, C]ᵀ; dH = dL·E; dE = dLᵀ·H.
    all.push_back({"decoder [4096x128]*[2048x128]^T", 4096, 2048, 128, false, true});
    all.push_back({"decoder dH = dL*E", 4096, 128, 2048, false, false});
    all.push_back({"decoder dE = dL^T*H", 2048, 128, 4096, true, false});
    // Attention, 32 sequences × 4 heads of [128, 32]: S = Q·Kᵀ, dQ = dS·K, dK = dSᵀ·Q.
    all.push_back({"attn 128x S = Q*K^T (128x128x32)", 128, 128, 32, false, true, 128});
    all.push_back({"attn 128x dQ = dS*K", 128, 32, 128, false, false, 128});
    all.push_back({"attn 128x dK = dS^T*Q", 128, 32, 128, true, false, 128});
    return all;
}

// Each row: the wall-clock GFLOP/s of the three cells, then (after "cpu:") GFLOP per
// CPU-second of the process. On a loaded machine the wall numbers fall with the time slices
// others take, while the per-CPU-second number of the 1-thread cell still measures the kernel;
// a 2-thread cell's CPU seconds also count a thread spinning or waiting at a barrier.
void bench_library() {
    std::printf(
        "\nsgemm, OpenBLAS: GFLOP/s, medians of %d interleaved repetitions"
        " (then GFLOP per CPU-second)\n",
        g_reps);
    std::printf("%-34s %8s | %8s %8s | %-7s | cpu: %6s | %6s %6s\n", "", "1t", "2t", "2t",
                "best 2t", "1t", "2t", "2t");
    std::printf("%-34s %8s | %8s %8s | %-7s |      %6s | %6s %6s\n", "", "", "own", "split", "", "",
                "own", "split");
    const char* names[] = {"own", "split"};
    for (const Product& p : model_products()) {
        if (p.name.find(g_only) == std::string::npos) continue;
        const Rates r =
            time_cells(p, {{Mode::one, {}, {}}, {Mode::own, {}, {}}, {Mode::split, {}, {}}});
        const std::vector<double>&g = r.wall, &c = r.cpu;
        const size_t best = g[2] > g[1] ? 2 : 1;
        std::printf("%-34s %8.1f | %8.1f %8.1f | %-7s |      %6.1f | %6.1f %6.1f\n", p.name.c_str(),
                    g[0], g[1], g[2], names[best - 1], c[0], c[1], c[2]);
        std::fflush(stdout);
    }
}

#ifdef RF_HAVE_ONEDNN
// Section 2: oneDNN beside OpenBLAS under our split, 2 threads.
void bench_onednn() {
    std::printf(
        "\nsgemm, oneDNN %d.%d.%d: GFLOP/s on 2 threads, medians of %d interleaved repetitions\n",
        dnnl_version()->major, dnnl_version()->minor, dnnl_version()->patch, g_reps);
    std::printf("%-34s %8s | %8s %8s %8s\n", "", "OpenBLAS", "dnnl", "dnnl", "matmul");
    std::printf("%-34s %8s | %8s %8s %8s\n", "", "split", "own", "split", "prim");
    for (const Product& p : model_products()) {
        if (p.name.find(g_only) == std::string::npos) continue;
        const std::vector<Cell> cells = {{Mode::split, {}, {}},
                                         {Mode::dnnl_own, {}, {}},
                                         {Mode::dnnl_split, {}, {}},
                                         {Mode::dnnl_primitive, {}, {}}};
        const std::vector<double> g = time_cells(p, cells).wall;
        std::printf("%-34s %8.1f | %8.1f %8.1f %8.1f\n", p.name.c_str(), g[0], g[1], g[2], g[3]);
        std::fflush(stdout);
    }
}
#endif

// The peak scripts/bench.sh divides by: the best 2-thread GFLOP/s, any library and threading,
// over the [4096×256]·[256×256] product and the wider ones.
void print_peak() {
    const std::vector<Product> wide = {{"[4096x256]*[256x256]", 4096, 256, 256, false, false},
                                       {"[4096x256]*[256x1024]", 4096, 1024, 256, false, false},
                                       {"[4096x1024]*[1024x256]", 4096, 256, 1024, false, false}};
    std::vector<Cell> cells = {{Mode::own, {}, {}}, {Mode::split, {}, {}}};
    std::vector<std::string> names = {"OpenBLAS own threads", "OpenBLAS under our split"};
#ifdef RF_HAVE_ONEDNN
    cells.push_back({Mode::dnnl_own, {}, {}});
    cells.push_back({Mode::dnnl_split, {}, {}});
    cells.push_back({Mode::dnnl_primitive, {}, {}});
    names.insert(names.end(), {"oneDNN dnnl_sgemm own threads", "oneDNN dnnl_sgemm under our split",
                               "oneDNN matmul primitive"});
#endif
    double peak = 0, openblas = 0;
    std::string where;
    for (const Product& p : wide) {
        const std::vector<double> g = time_cells(p, cells).wall;
        for (size_t i = 0; i < g.size(); ++i) {
            if (g[i] > peak) peak = g[i], where = p.name + ", " + names[i];
            if (i < 2) openblas = std::max(openblas, g[i]);
        }
    }
    std::printf("sgemm peak: %.1f GFLOP/s on 2 threads (%s; median of %d)\n", peak, where.c_str(),
                g_reps);
    std::printf("  (OpenBLAS alone: %.1f GFLOP/s; libraries tried: %s)\n", openblas, kLibraries);
}

}  // namespace

int main(int argc, char** argv) {
    static_assert(sizeof(Real) == sizeof(float), "the benchmark uses the float32 library");
    bool machine = false, peak = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--machine") {
            machine = true;
        } else if (arg == "--peak") {
            peak = true;
        } else if (arg == "--reps" && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
            g_reps = std::atoi(argv[++i]);
        } else if (arg == "--only" && i + 1 < argc) {
            g_only = argv[++i];
        } else {
            std::fprintf(stderr,
                         "bench_matmul: unknown argument '%s'; use --machine, --peak, "
                         "--reps N (N > 0), --only TEXT\n",
                         arg.c_str());
            return 2;
        }
    }
    try {
        print_machine();
        if (machine) return 0;
        if (peak) {
            print_peak();
            return 0;
        }
        bench_library();
#ifdef RF_HAVE_ONEDNN
        bench_onednn();
#endif
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_matmul: %s\n", e.what());
        return 1;
    }
    return 0;
}
