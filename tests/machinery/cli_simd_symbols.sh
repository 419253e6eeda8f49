#!/bin/sh
# The One Definition Rule guard of the per-ISA kernel files (src/fast/simd_kernels.hpp): in
# each static library given, the objects compiled with -mavx2 / -mavx512* (simd_avx2.cpp.o,
# simd_avx512.cpp.o) may define only
#   - their entry point rf::simd_kernels_<isa>(), and
#   - symbols whose (demangled) name carries their own architecture (xsimd's avx2 / avx512
#     instances), plus the exception-handling reference DW.ref.__gxx_personality_v0;
# any other global (a weak std:: or rf:: inline function, an sse2 instance) could be merged
# by the linker with the baseline build's copy, running wide instructions where the CPU may
# lack them. Nor may they run code at start-up (_GLOBAL__sub_I: a static initializer runs on
# every CPU). Usage: cli_simd_symbols.sh libroformer_core.a [more libraries]; prints PASS.
set -eu
status=0
for lib in "$@"; do
    lib=$(realpath "$lib")
    for isa in avx2 avx512; do
        member=simd_$isa.cpp.o
        if ! ar t "$lib" | grep -qx "$member"; then
            echo "FAIL: $lib has no $member (the per-ISA kernels are not built)"
            status=1
            continue
        fi
        dir=$(mktemp -d)
        (cd "$dir" && ar x "$lib" "$member")
        bad=$(nm -C -g --defined-only "$dir/$member" | cut -c 20- |
              grep -v -e "^rf::simd_kernels_$isa()\$" -e "^DW.ref.__gxx_personality_v0\$" |
              grep -v "$isa" || true)
        init=$(nm "$dir/$member" | grep "_GLOBAL__sub_I" || true)
        rm -rf "$dir"
        member_status=0
        if [ -n "$bad" ]; then
            echo "FAIL: $lib($member) defines symbols without '$isa' in their names:"
            echo "$bad"
            member_status=1
        fi
        if [ -n "$init" ]; then
            echo "FAIL: $lib($member) has a static initializer: $init"
            member_status=1
        fi
        if [ "$member_status" -eq 0 ]; then
            echo "$lib($member): ok"
        else
            status=1
        fi
    done
done
[ "$status" -eq 0 ] && echo PASS
exit "$status"
