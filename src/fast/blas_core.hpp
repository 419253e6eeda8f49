// Room — fast: which kernel set ("core") OpenBLAS runs, against what the CPU can do.
//
// Debian's OpenBLAS is built for every x86-64 CPU at once (DYNAMIC_ARCH): when the library
// loads, it reads the CPU's model from CPUID and picks one of its kernel sets — Prescott
// (SSE3), Nehalem, Sandybridge (AVX), Haswell (AVX2 + FMA), SkylakeX (AVX-512), … A CPU newer
// than its tables gets a generic fallback: on an Intel Xeon of family 6 model 207 (Emerald
// Rapids) OpenBLAS 0.3.21 ran Prescott's SSE3 kernels, and training was 3.4× slower than with
// SkylakeX's. The library takes $OPENBLAS_CORETYPE instead of its own pick, but only when the
// variable is set before it loads, so the roformer program checks the pick at start-up and,
// when the rule below says so, sets the variable and starts itself again, once
// (src/cli/main.cpp). docs/performance.md ("Which kernels OpenBLAS runs") has the
// measurements behind the rule.
//
// All of this is x86-64's: on arm64 OpenBLAS's own pick (from the CPU's ID registers) stands,
// never switched, and the line names no CPU level.
//
// Three parts, so that a test can check each: what the CPU supports (detect_cpu_level, from
// CPUID; cpu_level_from_flags, from /proc/cpuinfo's words), the rule (choose_blas_core: a
// pure function of the CPU and the library's pick) and the line the run log prints
// (blas_core_line).
#pragma once

#include <optional>
#include <string>

namespace rf {

// The widest vector unit the CPU has (and the OS has enabled), as OpenBLAS's kernel sets need
// it. avx512 = AVX-512 F + BW + VL + DQ + CD (the Skylake-X set); avx2 = AVX2 + FMA.
enum class CpuLevel { sse2, sse3, ssse3, sse4_2, avx, avx2, avx512 };
const char* cpu_level_name(CpuLevel level);  // "sse2", …, "avx512"

CpuLevel detect_cpu_level();  // this CPU, from CPUID (__builtin_cpu_supports)
// The same from the "flags" line of /proc/cpuinfo (words such as "pni avx2 fma avx512f");
// Linux lists only what the kernel enabled, so on a correct system both agree.
CpuLevel cpu_level_from_flags(const std::string& flags);

// The vector level an OpenBLAS 0.3.x x86-64 core needs ("Haswell" → avx2), names compared
// case-insensitively as OpenBLAS does; nullopt for a name it does not know.
std::optional<CpuLevel> blas_core_level(const std::string& core);
// The core that uses the widest unit of `cpu` level ("SkylakeX" for avx512); "" below SSE3.
std::string best_blas_core(CpuLevel cpu);

// The rule: given what the CPU supports and which core the library picked by itself, which
// core should run. switch_core = false: keep the library's pick (core = its name).
struct BlasCoreChoice {
    std::string core;
    bool switch_core = false;
    std::string why;  // one clause for the run log
};
BlasCoreChoice choose_blas_core(CpuLevel cpu, const std::string& library_core);

// What the process should do before anything else, from its environment:
//   RF_BLAS_CORE       auto (default): apply the rule; keep: leave the library's pick alone
//   OPENBLAS_CORETYPE  set (non-empty) by the user: respected, never overridden
//   RF_TEST_BLAS_LIBRARY_CORE  tests only: pretend the library picked this core
// Returns the core to restart with (OPENBLAS_CORETYPE=core), or "" to carry on. Throws
// std::invalid_argument on a bad RF_BLAS_CORE.
std::string blas_core_restart();
// Marks the environment for the restart: OPENBLAS_CORETYPE=core and the library's own pick
// in RF_BLAS_CORE_WAS, which blas_core_line reports. Returns false if setenv failed.
bool prepare_blas_core_restart(const std::string& core);

// One line for run logs: BLAS name, version and threading build, the core running, what the
// CPU supports, and why — e.g.
// "OpenBLAS 0.3.21 (OpenMP build) core SkylakeX (CPU: avx512; was Haswell, switched)".
std::string blas_core_line();

}  // namespace rf
