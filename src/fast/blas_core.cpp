// Room — fast: OpenBLAS's kernel set against the CPU (see blas_core.hpp).
#include "fast/blas_core.hpp"

#include <cblas.h>
#include <strings.h>

#include <cstdlib>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

namespace rf {

const char* cpu_level_name(CpuLevel level) {
    switch (level) {
        case CpuLevel::sse2:
            return "sse2";
        case CpuLevel::sse3:
            return "sse3";
        case CpuLevel::ssse3:
            return "ssse3";
        case CpuLevel::sse4_2:
            return "sse4.2";
        case CpuLevel::avx:
            return "avx";
        case CpuLevel::avx2:
            return "avx2";
        case CpuLevel::avx512:
            return "avx512";
    }
    return "?";
}

// The one place the levels are defined, for both sources of flags: has(name) answers for a
// feature by its /proc/cpuinfo name.
template <class Has>
static CpuLevel level_of(Has has) {
    if (has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq") &&
        has("avx512cd") && has("avx2") && has("fma"))
        return CpuLevel::avx512;
    if (has("avx2") && has("fma")) return CpuLevel::avx2;
    if (has("avx")) return CpuLevel::avx;
    if (has("sse4_2") && has("ssse3")) return CpuLevel::sse4_2;
    if (has("ssse3")) return CpuLevel::ssse3;
    if (has("pni")) return CpuLevel::sse3;  // Linux calls SSE3 "pni" (Prescott New Instructions)
    return CpuLevel::sse2;
}

CpuLevel detect_cpu_level() {
#if defined(__x86_64__) || defined(__i386__)
    // libgcc's CPUID reader also checks that the OS saves the AVX / AVX-512 registers (XGETBV),
    // so a feature counts only when it can be used.
    __builtin_cpu_init();
    return level_of([](const std::string& name) {
        if (name == "avx512f") return bool(__builtin_cpu_supports("avx512f"));
        if (name == "avx512bw") return bool(__builtin_cpu_supports("avx512bw"));
        if (name == "avx512vl") return bool(__builtin_cpu_supports("avx512vl"));
        if (name == "avx512dq") return bool(__builtin_cpu_supports("avx512dq"));
        if (name == "avx512cd") return bool(__builtin_cpu_supports("avx512cd"));
        if (name == "avx2") return bool(__builtin_cpu_supports("avx2"));
        if (name == "fma") return bool(__builtin_cpu_supports("fma"));
        if (name == "avx") return bool(__builtin_cpu_supports("avx"));
        if (name == "sse4_2") return bool(__builtin_cpu_supports("sse4.2"));
        if (name == "ssse3") return bool(__builtin_cpu_supports("ssse3"));
        if (name == "pni") return bool(__builtin_cpu_supports("sse3"));
        return false;
    });
#else
    return CpuLevel::sse2;  // not x86: OpenBLAS's cores there are another list; never switch
#endif
}

CpuLevel cpu_level_from_flags(const std::string& flags) {
    std::istringstream words(flags);
    const std::set<std::string> set{std::istream_iterator<std::string>(words),
                                    std::istream_iterator<std::string>()};
    return level_of([&](const std::string& name) { return set.count(name) > 0; });
}

// OpenBLAS 0.3.21's x86-64 cores (driver/others/dynamic.c) and the widest unit each uses.
// The old 32-bit-era names (Katmai … Opteron) run Prescott's kernels in a 64-bit build.
struct CoreRow {
    const char* name;
    CpuLevel level;
};
static const CoreRow kCores[] = {
    {"Katmai", CpuLevel::sse2},       {"Coppermine", CpuLevel::sse2},
    {"Northwood", CpuLevel::sse2},    {"Banias", CpuLevel::sse2},
    {"Athlon", CpuLevel::sse2},       {"Opteron", CpuLevel::sse2},
    {"Prescott", CpuLevel::sse3},     {"Opteron_SSE3", CpuLevel::sse3},
    {"Barcelona", CpuLevel::sse3},    {"Core2", CpuLevel::ssse3},
    {"Penryn", CpuLevel::ssse3},      {"Dunnington", CpuLevel::ssse3},
    {"Atom", CpuLevel::ssse3},        {"Nano", CpuLevel::ssse3},
    {"Bobcat", CpuLevel::ssse3},      {"Nehalem", CpuLevel::sse4_2},
    {"Sandybridge", CpuLevel::avx},   {"Bulldozer", CpuLevel::avx},
    {"Piledriver", CpuLevel::avx},    {"Steamroller", CpuLevel::avx},
    {"Excavator", CpuLevel::avx2},    {"Haswell", CpuLevel::avx2},
    {"Zen", CpuLevel::avx2},          {"SkylakeX", CpuLevel::avx512},
    {"Cooperlake", CpuLevel::avx512}, {"SapphireRapids", CpuLevel::avx512},
};

std::optional<CpuLevel> blas_core_level(const std::string& core) {
    for (const CoreRow& row : kCores)
        if (strcasecmp(row.name, core.c_str()) == 0) return row.level;
    return std::nullopt;
}

std::string best_blas_core(CpuLevel cpu) {
    switch (cpu) {
        case CpuLevel::sse2:
            return "";
        case CpuLevel::sse3:
            return "Prescott";
        case CpuLevel::ssse3:
            return "Core2";
        case CpuLevel::sse4_2:
            return "Nehalem";
        case CpuLevel::avx:
            return "Sandybridge";
        case CpuLevel::avx2:
            return "Haswell";
        case CpuLevel::avx512:
            return "SkylakeX";
    }
    return "";
}

BlasCoreChoice choose_blas_core(CpuLevel cpu, const std::string& library_core) {
    const std::optional<CpuLevel> picked = blas_core_level(library_core);
    const std::string best = best_blas_core(cpu);
    if (!picked) return {library_core, false, "a core this check does not know; kept"};
    if (best.empty() || *picked >= cpu) return {library_core, false, "the best for this CPU"};
    return {best, true, std::string("was ") + library_core + ", switched"};
}

static std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

// RF_BLAS_CORE, checked: "" or "auto" → true (apply the rule), "keep" → false.
static bool check_enabled() {
    const std::string mode = env("RF_BLAS_CORE");
    if (mode.empty() || mode == "auto") return true;
    if (mode == "keep") return false;
    throw std::invalid_argument("RF_BLAS_CORE='" + mode +
                                "' is not a setting; use auto (the default: run the best BLAS "
                                "core for this CPU) or keep (the library's own choice)");
}

// The core the library picked by itself, or the one a test pretends it picked.
static std::string library_core() {
    const std::string simulated = env("RF_TEST_BLAS_LIBRARY_CORE");
    return simulated.empty() ? std::string(openblas_get_corename()) : simulated;
}

// The rule knows x86-64's cores only: on another CPU (arm64) OpenBLAS's own pick always stands.
#if defined(__x86_64__) || defined(__i386__)
constexpr bool kX86 = true;
#else
constexpr bool kX86 = false;
#endif

std::string blas_core_restart() {
    if (!check_enabled() || !kX86 || !env("OPENBLAS_CORETYPE").empty()) return "";
    const BlasCoreChoice choice = choose_blas_core(detect_cpu_level(), library_core());
    return choice.switch_core ? choice.core : "";
}

bool prepare_blas_core_restart(const std::string& core) {
    return setenv("RF_BLAS_CORE_WAS", library_core().c_str(), 1) == 0 &&
           setenv("OPENBLAS_CORETYPE", core.c_str(), 1) == 0;
}

// "OpenBLAS 0.3.21 (OpenMP build)": the name and version from openblas_get_config() ("OpenBLAS
// 0.3.21 NO_LAPACKE DYNAMIC_ARCH …"), and whose threads it runs on (CMakeLists.txt links the
// OpenMP build; Debian's default is the pthreads one).
static std::string blas_version() {
    std::istringstream config(openblas_get_config());
    std::string name, version;
    config >> name >> version;
    const int parallel = openblas_get_parallel();  // 0 sequential, 1 pthreads, 2 OpenMP
    return name + " " + version +
           (parallel == 2   ? " (OpenMP build)"
            : parallel == 1 ? " (pthreads build)"
                            : " (sequential build)");
}

std::string blas_core_line() {
    const std::string running = openblas_get_corename();
    const CpuLevel cpu = detect_cpu_level();
    const std::string requested = env("OPENBLAS_CORETYPE"), was = env("RF_BLAS_CORE_WAS");
    std::string why;
    if (!requested.empty() && strcasecmp(requested.c_str(), running.c_str()) != 0) {
        why = "OPENBLAS_CORETYPE=" + requested + " was not taken; OpenBLAS chose " + running;
    } else if (!requested.empty() && !was.empty()) {
        why = "was " + was + ", switched";
    } else if (!requested.empty()) {
        why = "set by OPENBLAS_CORETYPE, kept";
        const std::optional<CpuLevel> level = blas_core_level(running);
        if (level && *level < cpu && !best_blas_core(cpu).empty())
            why += "; this CPU's widest is " + best_blas_core(cpu);
    } else if (!kX86) {
        why = "the library's own choice for this CPU";
    } else {
        const BlasCoreChoice choice = choose_blas_core(cpu, library_core());
        bool enabled = true;
        try {
            enabled = check_enabled();
        } catch (const std::invalid_argument&) {}
        if (!enabled)
            why = std::string("the library's choice, kept by RF_BLAS_CORE=keep") +
                  (choice.switch_core ? "; the check would run " + choice.core : "");
        else if (choice.switch_core)
            why = "the switch to " + choice.core + " failed; running the library's choice";
        else
            why = choice.why;
    }
    const std::string level = kX86 ? std::string("CPU: ") + cpu_level_name(cpu) + "; " : "";
    return blas_version() + " core " + running + " (" + level + why + ")";
}

}  // namespace rf
