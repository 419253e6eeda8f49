// Room — fast: which vector instruction set the fast path's element-wise kernels use
// (model.isa; docs/performance.md, "Vector width").
//
// The library is built for the portable baseline (SSE2 on x86-64: no -march), so the composed
// ops' numbers never move. The fast path's kernels (simd_table.hpp: GELU, residual +
// LayerNorm, the fused attention's softmax rows, AdamW's element loop) are also compiled for
// AVX2 + FMA and for AVX-512, each in its own file with its own flags, and one table of them
// is chosen at run time:
//   auto    the widest the CPU has (the default)
//   sse2    the baseline build's kernels (4 float lanes; named after -march when RF_NATIVE)
//   avx2    8 float lanes, fused multiply-add
//   avx512  16 float lanes (needs avx512f, cd, bw, vl and dq)
// On arm64 the baseline is NEON (4 float lanes; every ARMv8-A CPU has it) and there is no
// wider table:
//   auto, neon  the baseline build's kernels (xsimd's neon64)
// An ISA of the other kind (sse2, avx2, avx512 on arm64; neon on x86-64) is one this CPU
// lacks: refused like any other.
// Same ISA, same inputs, same thread count → the same numbers. Two ISAs differ at float
// rounding: more lanes sum in another order, FMA rounds once where mul + add rounds twice,
// and xsimd's exp/erfc polynomials are evaluated with the ISA's own instructions.
#pragma once

#include <string>

#include "fast/fast_config.hpp"  // SimdIsa
#include "fast/simd_table.hpp"

namespace rf {

// Whether this CPU (and this build) can run `isa`'s kernels; automatic and the baseline (sse2
// on x86-64, neon on arm64): always.
// RF_MAX_CPU_ISA=sse2 or avx2 in the environment hides the wider sets (and AVX512_BF16) from
// this process: how the tests play a narrower CPU.
bool cpu_supports(SimdIsa isa);
// "" when RF_MAX_CPU_ISA is unset or one of its words (sse2, avx2); else the one-line refusal
// naming the value and the words (the command checks it before anything else).
std::string max_cpu_isa_refusal();
// The build's baseline, which every CPU of its kind runs: sse2 on x86-64, neon on arm64.
SimdIsa baseline_isa();
// The widest ISA cpu_supports.
SimdIsa widest_isa();
// The ISAs this CPU runs, narrowest first: "sse2, avx2, avx512" (arm64: "neon").
std::string supported_isas();
// `requested` with automatic replaced by widest_isa(). An ISA the CPU lacks throws
// std::invalid_argument naming `key`, the ISA and the ones this CPU has.
SimdIsa resolve_isa(SimdIsa requested, const std::string& key = "model.isa");

// Chooses the kernels every later fast-path op uses (process-wide; set it before the run
// starts, not while ops run). Returns the resolved ISA; throws as resolve_isa.
SimdIsa set_simd_isa(SimdIsa requested);
// The ISA in force: what set_simd_isa chose last, widest_isa() before any call.
SimdIsa simd_isa();
// The kernels of the ISA in force, and of one supported ISA (tests run each).
const SimdKernels& simd_kernels();
const SimdKernels& simd_kernels(SimdIsa isa);

}  // namespace rf
