// Room — fast: choosing the fast path's instruction set (see simd.hpp).
#include "fast/simd.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace rf {
namespace {

// The build's baseline, the table simd_sse2.cpp compiles with the library's own flags: SSE2 on
// x86-64, NEON on arm64 (xsimd's default architecture there).
#if defined(__x86_64__) || defined(__i386__)
constexpr SimdIsa kBaseline = SimdIsa::sse2;
#elif defined(__aarch64__)
constexpr SimdIsa kBaseline = SimdIsa::neon;
#else
#error "model.isa: only x86-64 and arm64 have a baseline named here (src/fast/simd.cpp)"
#endif

// What the CPU has, asked once (GCC's CPUID probe; it also checks that the OS saves the wide
// registers). RF_SIMD_X86 (CMakeLists.txt): the wide files are compiled at all.
bool cpu_has(SimdIsa isa) {
    if (isa == SimdIsa::automatic || isa == kBaseline) return true;
#ifdef RF_SIMD_X86
    switch (isa) {
        case SimdIsa::avx2:
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case SimdIsa::avx512:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                   __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
        default:
            return false;
    }
#else
    return false;
#endif
}

const SimdKernels& table_of(SimdIsa isa) {
    switch (isa) {
#ifdef RF_SIMD_X86
        case SimdIsa::avx2:
            return simd_kernels_avx2();
        case SimdIsa::avx512:
            return simd_kernels_avx512();
#endif
        default:
            return simd_kernels_sse2();
    }
}

std::atomic<int> chosen{-1};  // a SimdIsa once set; −1: not yet (the widest)

}  // namespace

// RF_MAX_CPU_ISA=sse2|avx2 makes this process treat the CPU as one without the wider sets (and,
// below avx512, without AVX512_BF16): how the tests read a run trained with model.isa = avx2 or
// model.precision = bf16 as a CPU without them would (tests/machinery/cli_portable_run.sh).
static const char* const kCpuIsaCaps[] = {"sse2", "avx2"};

std::string max_cpu_isa_refusal() {
    const char* cap = std::getenv("RF_MAX_CPU_ISA");
    if (cap == nullptr) return "";
    std::string words;
    for (const char* word : kCpuIsaCaps) {
        if (std::strcmp(cap, word) == 0) return "";
        words += (words.empty() ? "" : ", ") + std::string(word);
    }
    return "RF_MAX_CPU_ISA='" + std::string(cap) + "' is not a word roformer knows; give one of " +
           words + ", or unset it to use every ISA this CPU has";
}

static bool capped_below(SimdIsa isa) {
    const char* cap = std::getenv("RF_MAX_CPU_ISA");
    if (cap == nullptr) return false;
    if (std::strcmp(cap, "sse2") == 0) return isa == SimdIsa::avx2 || isa == SimdIsa::avx512;
    if (std::strcmp(cap, "avx2") == 0) return isa == SimdIsa::avx512;
    return false;
}

bool cpu_supports(SimdIsa isa) {
    static const bool has[5] = {true, cpu_has(SimdIsa::sse2),
                                cpu_has(SimdIsa::avx2) && !capped_below(SimdIsa::avx2),
                                cpu_has(SimdIsa::avx512) && !capped_below(SimdIsa::avx512),
                                cpu_has(SimdIsa::neon)};
    return has[int(isa)];
}

SimdIsa baseline_isa() { return kBaseline; }

SimdIsa widest_isa() {
    return cpu_supports(SimdIsa::avx512) ? SimdIsa::avx512
           : cpu_supports(SimdIsa::avx2) ? SimdIsa::avx2
                                         : kBaseline;
}

std::string supported_isas() {
    std::string list;
    for (SimdIsa isa : {SimdIsa::sse2, SimdIsa::avx2, SimdIsa::avx512, SimdIsa::neon})
        if (cpu_supports(isa)) list += (list.empty() ? "" : ", ") + std::string(enum_name(isa));
    return list;
}

SimdIsa resolve_isa(SimdIsa requested, const std::string& key) {
    if (requested == SimdIsa::automatic) return widest_isa();
    if (!cpu_supports(requested))
        throw std::invalid_argument(key + " = " + enum_name(requested) +
                                    ": this CPU lacks it (it has " + supported_isas() +
                                    "); use auto or one of those");
    return requested;
}

SimdIsa set_simd_isa(SimdIsa requested) {
    const SimdIsa isa = resolve_isa(requested);
    chosen.store(int(isa));
    return isa;
}

SimdIsa simd_isa() {
    const int isa = chosen.load();
    return isa < 0 ? widest_isa() : SimdIsa(isa);
}

const SimdKernels& simd_kernels() { return table_of(simd_isa()); }

const SimdKernels& simd_kernels(SimdIsa isa) { return table_of(resolve_isa(isa)); }

}  // namespace rf
