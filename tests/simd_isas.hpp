// For the fast path's kernel tests: run a body once per instruction set of src/fast/simd.hpp
// that this CPU has (sse2, avx2, avx512; neon on arm64), saying which it skipped; the ISA in force before is
// restored afterwards, even when a REQUIRE throws.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "fast/simd.hpp"

namespace rf::testing {

struct IsaRestore {
    SimdIsa before = simd_isa();
    ~IsaRestore() { set_simd_isa(before); }
};

// body(SimdIsa) with that ISA in force, for every ISA the CPU runs.
template <class Body>
void for_each_isa(Body body) {
    const IsaRestore restore;
    for (SimdIsa isa : {SimdIsa::sse2, SimdIsa::avx2, SimdIsa::avx512, SimdIsa::neon}) {
        if (!cpu_supports(isa)) {
            MESSAGE("skipped ISA " << std::string(enum_name(isa)) << ": this CPU lacks it");
            continue;
        }
        set_simd_isa(isa);
        INFO("ISA " << std::string(enum_name(isa)));
        body(isa);
    }
}

}  // namespace rf::testing
