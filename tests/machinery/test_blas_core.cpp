// The BLAS core check (src/fast/blas_core.hpp): what the CPU supports, from CPUID and from
// /proc/cpuinfo's words; the rule that says which OpenBLAS kernel set should run, case by
// case; and the run-log line. tests/CMakeLists.txt's cli_blas_core runs the real restart.
#include <doctest/doctest.h>

#include <cblas.h>

#include <fstream>
#include <string>
#include <vector>

#include "fast/openmp.hpp"
#include "fast/threading.hpp"
#include "fast/blas_core.hpp"
#include "fast/products.hpp"

using namespace rf;

TEST_CASE("blas core: the CPU level from /proc/cpuinfo's flag words") {
    CHECK(cpu_level_from_flags("") == CpuLevel::sse2);
    CHECK(cpu_level_from_flags("fpu sse sse2") == CpuLevel::sse2);
    CHECK(cpu_level_from_flags("sse2 pni") == CpuLevel::sse3);
    CHECK(cpu_level_from_flags("sse2 pni ssse3") == CpuLevel::ssse3);
    CHECK(cpu_level_from_flags("pni ssse3 sse4_1 sse4_2") == CpuLevel::sse4_2);
    CHECK(cpu_level_from_flags("pni ssse3 sse4_2 avx") == CpuLevel::avx);
    CHECK(cpu_level_from_flags("pni ssse3 sse4_2 avx avx2") == CpuLevel::avx);  // no FMA
    CHECK(cpu_level_from_flags("pni ssse3 sse4_2 avx avx2 fma") == CpuLevel::avx2);
    // AVX-512 counts only with all five parts the Skylake-X kernels use.
    const std::string avx2 = "pni ssse3 sse4_2 avx avx2 fma ";
    CHECK(cpu_level_from_flags(avx2 + "avx512f") == CpuLevel::avx2);  // Knights Landing-like
    CHECK(cpu_level_from_flags(avx2 + "avx512f avx512bw avx512vl avx512dq") == CpuLevel::avx2);
    CHECK(cpu_level_from_flags(avx2 + "avx512f avx512bw avx512vl avx512dq avx512cd") ==
          CpuLevel::avx512);
    CHECK(cpu_level_from_flags("avx512f avx512bw avx512vl avx512dq avx512cd") == CpuLevel::sse2);
}

TEST_CASE("blas core: CPUID and /proc/cpuinfo agree on this machine") {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line) && line.rfind("flags", 0) != 0) {}
    if (line.rfind("flags", 0) != 0) {  // CPUID and these words are x86's
        MESSAGE("skipped: /proc/cpuinfo has no flags line (not Linux on x86)");
        return;
    }
    CHECK(detect_cpu_level() == cpu_level_from_flags(line.substr(line.find(':') + 1)));
}

TEST_CASE("blas core: core names and levels") {
    CHECK(blas_core_level("Prescott") == CpuLevel::sse3);
    CHECK(blas_core_level("haswell") == CpuLevel::avx2);  // OpenBLAS compares without case
    CHECK(blas_core_level("SKYLAKEX") == CpuLevel::avx512);
    CHECK(!blas_core_level("Unknown").has_value());
    CHECK(!blas_core_level("").has_value());
    // The core chosen for a level runs on that level, and names a core OpenBLAS knows.
    for (CpuLevel cpu : {CpuLevel::sse3, CpuLevel::ssse3, CpuLevel::sse4_2, CpuLevel::avx,
                         CpuLevel::avx2, CpuLevel::avx512}) {
        CAPTURE(std::string(cpu_level_name(cpu)));
        CHECK(blas_core_level(best_blas_core(cpu)) == cpu);
    }
    CHECK(best_blas_core(CpuLevel::sse2).empty());
}

TEST_CASE("blas core: the rule, case by case") {
    struct Case {
        CpuLevel cpu;
        const char* library;
        bool switch_core;
        const char* core;  // what should run
    };
    const Case cases[] = {
        // A CPU newer than the library's tables: the generic fallback is replaced.
        {CpuLevel::avx512, "Prescott", true, "SkylakeX"},  // Emerald Rapids, issue 22
        {CpuLevel::avx2, "Prescott", true, "Haswell"},
        {CpuLevel::avx, "Prescott", true, "Sandybridge"},
        {CpuLevel::sse4_2, "Prescott", true, "Nehalem"},
        {CpuLevel::avx512, "Core2", true, "SkylakeX"},
        {CpuLevel::avx512, "Nehalem", true, "SkylakeX"},
        {CpuLevel::avx512, "Sandybridge", true, "SkylakeX"},
        {CpuLevel::avx2, "Nehalem", true, "Haswell"},
        {CpuLevel::avx512, "Haswell", true, "SkylakeX"},
        {CpuLevel::avx512, "Zen", true, "SkylakeX"},
        // Already the widest the CPU has: kept.
        {CpuLevel::avx512, "SkylakeX", false, "SkylakeX"},
        {CpuLevel::avx512, "Cooperlake", false, "Cooperlake"},
        {CpuLevel::avx2, "Haswell", false, "Haswell"},
        {CpuLevel::avx2, "Zen", false, "Zen"},
        {CpuLevel::sse3, "Prescott", false, "Prescott"},
        // Never down: a core wider than the CPU's level (the CPUID reading is the odd one).
        {CpuLevel::avx2, "SkylakeX", false, "SkylakeX"},
        // Nothing to switch to on a CPU below SSE3, nor from a name this check does not know
        // (a newer OpenBLAS's core: it knew the CPU better than our table).
        {CpuLevel::sse2, "Katmai", false, "Katmai"},
        {CpuLevel::avx512, "Unknown", false, "Unknown"},
        {CpuLevel::avx512, "Zen5", false, "Zen5"},
    };
    for (const Case& c : cases) {
        CAPTURE(std::string(cpu_level_name(c.cpu)));
        CAPTURE(std::string(c.library));
        const BlasCoreChoice choice = choose_blas_core(c.cpu, c.library);
        CHECK(choice.switch_core == c.switch_core);
        CHECK(choice.core == c.core);
        CHECK(!choice.why.empty());
    }
}

TEST_CASE("blas core: the run-log line names the library, its version, the core and the CPU") {
    const std::string line = blas_core_line();
    CAPTURE(line);
    CHECK(line.rfind("OpenBLAS 0.", 0) == 0);
    CHECK(line.find(openblas_get_parallel() == 2 ? " (OpenMP build) core " : " build) core ") !=
          std::string::npos);
#if defined(__x86_64__)
    CHECK(line.find(std::string(" core ") + openblas_get_corename() +
                    " (CPU: " + cpu_level_name(detect_cpu_level()) + "; ") != std::string::npos);
#else  // the CPU levels and the switch are x86-64's: elsewhere the library's pick, unnamed
    CHECK(line.find(std::string(" core ") + openblas_get_corename() +
                    " (the library's own choice for this CPU)") != std::string::npos);
    CHECK(blas_core_restart().empty());
#endif
}

// One thread pool (issue 22): on the fast path (split_products) our loops split the products
// and OpenBLAS's pthreads build is held to one thread, so it never hands work to a worker of
// its own; the composed path lets it thread as before. Its OpenMP build (-DRF_OPENBLAS_OPENMP)
// follows OpenMP's count, and its openblas_set_num_threads would set OpenMP's too: a product
// loop must still get every thread either way.
TEST_CASE("blas threads: one BLAS thread on the fast path; a product loop keeps all of ours") {
#if RF_OPENBLAS_OPENMP
    CHECK(openblas_get_parallel() == 2);  // 0 sequential, 1 pthreads, 2 OpenMP
#endif
    const bool pthreads = openblas_get_parallel() == 1;
    const Threading before = threading();
    if (!kOpenMP) {  // no pool of ours: one thread for our loops and OpenBLAS, whatever is asked
        MESSAGE("a build without OpenMP: every run is one thread (src/fast/openmp.hpp)");
        CHECK(set_threading(Threading{2, false}).threads == 1);
        if (pthreads) CHECK(openblas_get_num_threads() == 1);
        set_threading(before);
        return;
    }
    set_threading(Threading{2, true});
    if (pthreads) CHECK(openblas_get_num_threads() == 1);
    std::vector<int> team(4, 0);
    for_each_product(team.size(), size_t(1) << 30,
                     [&](size_t i) { team[i] = omp_get_num_threads(); });
    for (int size : team) CHECK(size == 2);
    CHECK(omp_get_max_threads() == 2);  // and still 2 after the loop
    if (pthreads) CHECK(openblas_get_num_threads() == 1);

    set_threading(Threading{2, false});  // the composed path
    if (pthreads) CHECK(openblas_get_num_threads() == 2);
    for_each_product(team.size(), size_t(1) << 30,
                     [&](size_t i) { team[i] = omp_get_num_threads(); });
    for (int size : team) CHECK(size == 2);
    if (pthreads) CHECK(openblas_get_num_threads() == 2);  // restored after the loop
    set_threading(before);
}
