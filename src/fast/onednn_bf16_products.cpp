// Room — fast: the large products in bfloat16 through oneDNN (see onednn_bf16_products.hpp).
#include "fast/onednn_bf16_products.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "fast/simd.hpp"
#include "tensor/real.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RF_BF16_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

#if defined(RF_HAVE_ONEDNN) && defined(RF_BF16_X86)
#include <map>
#include <tuple>
#include <vector>

#include "fast/onednn_compat.hpp"
#endif

namespace rf {

namespace {

// AVX512_BF16 as cpu_supports reads AVX-512: the CPU has it, the operating system saves its
// registers, and RF_MAX_CPU_ISA (fast/simd.cpp) does not cap it. Then cpuid leaf 7,
// sub-leaf 1, EAX bit 5: AVX512_BF16.
bool cpu_bf16_bit() {
#ifdef RF_BF16_X86
    if (!cpu_supports(SimdIsa::avx512)) return false;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || eax < 1) return false;
    if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
    return (eax >> 5) & 1u;
#else
    return false;
#endif
}

// ONEDNN_MAX_CPU_ISA caps oneDNN itself: below avx512_core_bf16 no bf16 primitive can be made.
// oneDNN's ISAs nest as bit sets, so the one it will use must hold every bit of that one's
// (avx2_vnni_2's bf16 is not the AVX-512 one our rounding uses).
bool onednn_capped_below_bf16() {
#if defined(RF_HAVE_ONEDNN) && defined(RF_BF16_X86)
    if (std::getenv("ONEDNN_MAX_CPU_ISA") == nullptr) return false;
    const auto bf16 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
    return (static_cast<unsigned>(dnnl_get_effective_cpu_isa()) & bf16) != bf16;
#else
    return false;
#endif
}

}  // namespace

bool cpu_has_bf16() { return cpu_bf16_bit() && !onednn_capped_below_bf16(); }

std::string onednn_bf16_cap() {
    return cpu_bf16_bit() && onednn_capped_below_bf16() ? std::getenv("ONEDNN_MAX_CPU_ISA") : "";
}

std::string bf16_unavailable() {
#if !defined(RF_HAVE_ONEDNN)
    return "model.precision = bf16 multiplies in oneDNN, which this build has no copy of; "
           "install libdnnl-dev (scripts/setup.sh does) and rebuild, or use "
           "model.precision = fp32";
#elif !defined(RF_BF16_X86)
    return "model.precision = bf16 is built for x86-64 CPUs with AVX512_BF16 only; use "
           "model.precision = fp32";
#else
    if (sizeof(Real) != sizeof(float))
        return "model.precision = bf16 needs the float32 library (this one is built with "
               "RF_DOUBLE); use model.precision = fp32";
    if (!onednn_bf16_cap().empty())
        return "model.precision = bf16: ONEDNN_MAX_CPU_ISA=" + onednn_bf16_cap() +
               " keeps oneDNN below AVX512_CORE_BF16; unset it (or raise it to "
               "AVX512_CORE_BF16), or use model.precision = fp32";
    if (!cpu_has_bf16())
        return "model.precision = bf16: this CPU lacks AVX512_BF16 (bfloat16 products at "
               "float32's speed or worse); use model.precision = fp32";
    return "";
#endif
}

#if defined(RF_HAVE_ONEDNN) && defined(RF_BF16_X86)
namespace {

using dnnl::memory;

// dst[r, j] = bf16(src[r·ld + j]) for r < rows, j < cols: the CPU's own rounding (round to
// nearest, ties to even; a subnormal float, below 1.2e-38, becomes 0). Compiled for AVX-512
// alone; called only when cpu_has_bf16() said yes.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void round_to_bf16(
    const float* src, size_t rows, size_t cols, size_t ld, uint16_t* dst) {
    for (size_t r = 0; r < rows; ++r) {
        const float* s = src + r * ld;
        uint16_t* d = dst + r * cols;
        size_t j = 0;
        for (; j + 16 <= cols; j += 16) {
            const __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(s + j));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + j),
                                reinterpret_cast<const __m256i&>(h));
        }
        if (j < cols) {
            const __mmask16 tail = __mmask16((1u << (cols - j)) - 1);
            const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(tail, s + j));
            _mm256_mask_storeu_epi16(d + j, tail, reinterpret_cast<const __m256i&>(h));
        }
    }
}

const dnnl::engine& cpu_engine() {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

// One product shape's primitive and the layouts it was made for. Making a primitive costs far
// more than a small product, so each thread keeps the ones it made (a run has a few dozen
// shapes); per thread, so no lock is taken inside the parallel loop.
struct Prepared {
    dnnl::matmul matmul;
    memory::desc a, b, c;
};
using ShapeKey = std::tuple<bool, bool, size_t, size_t, size_t, size_t, float>;

const Prepared& prepared(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, float beta,
                         size_t ldc) {
    thread_local std::map<ShapeKey, Prepared> made;
    const ShapeKey key{trans_a, trans_b, M, N, K, ldc, beta};
    const auto found = made.find(key);
    if (found != made.end()) return found->second;
    const memory::dim m = memory::dim(M), n = memory::dim(N), k = memory::dim(K);
    // A and B are packed as stored (A: [M,K], or [K,M] when transposed; B likewise): the
    // transposes are strides, never copies.
    Prepared p;
    p.a = memory::desc({m, k}, memory::data_type::bf16,
                       trans_a ? memory::dims{1, m} : memory::dims{k, 1});
    p.b = memory::desc({k, n}, memory::data_type::bf16,
                       trans_b ? memory::dims{1, k} : memory::dims{n, 1});
    p.c = memory::desc({m, n}, memory::data_type::f32, memory::dims{memory::dim(ldc), 1});
    dnnl::primitive_attr attr;
    if (beta != 0.0f) {  // C = A·B + beta·C: oneDNN's sum post-op
        dnnl::post_ops ops;
        ops.append_sum(beta);
        attr.set_post_ops(ops);
    }
    p.matmul = dnnl::matmul(matmul_descriptor(cpu_engine(), p.a, p.b, p.c, attr));
    return made.emplace(key, std::move(p)).first->second;
}

// C[M,N] = bf16(op(A))·bf16(op(B)) + beta·C, row-major, with gemm()'s arguments. Inside our
// split's parallel loop oneDNN runs one thread; outside it, the run's threads.
void bf16_block_product(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A,
                        size_t lda, const float* B, size_t ldb, float beta, float* C, size_t ldc) {
    thread_local std::vector<uint16_t> a16, b16;
    a16.resize(M * K);
    b16.resize(K * N);
    round_to_bf16(A, trans_a ? K : M, trans_a ? M : K, lda, a16.data());
    round_to_bf16(B, trans_b ? N : K, trans_b ? K : N, ldb, b16.data());
    try {
        const Prepared& p = prepared(trans_a, trans_b, M, N, K, beta, ldc);
        thread_local dnnl::stream stream(cpu_engine());
        memory a(p.a, cpu_engine(), a16.data()), b(p.b, cpu_engine(), b16.data()),
            c(p.c, cpu_engine(), C);
        p.matmul.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
        stream.wait();
    } catch (const dnnl::error& e) {  // not for an empty product: block_gemm answers those
        throw std::runtime_error("oneDNN's bf16 matmul refused a " + std::to_string(M) + "×" +
                                 std::to_string(N) + "×" + std::to_string(K) + " product (" +
                                 e.what() + "); rerun with model.products = openblas");
    }
}

}  // namespace

std::string bf16_description() {
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + " matmul, bf16 operands, f32 sums";
}

FloatProduct bf16_product() {
    const std::string why = bf16_unavailable();
    if (!why.empty()) throw std::invalid_argument(why);
    return &bf16_block_product;
}

#else

std::string bf16_description() { return "bf16: not in this build"; }

FloatProduct bf16_product() { throw std::invalid_argument(bf16_unavailable()); }

#endif

}  // namespace rf
