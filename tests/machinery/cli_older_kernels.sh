#!/usr/bin/env bash
# The CPU-sensitive tests again with older CPUs' kernels forced, so that what a laptop without
# AVX-512 computes differently shows on the machine CI runs on: OpenBLAS's core type
# (OPENBLAS_CORETYPE: Debian's OpenBLAS carries every core's kernels and picks one by CPU) and
# oneDNN's highest instruction set (ONEDNN_MAX_CPU_ISA) and our own kernels' (RF_MAX_CPU_ISA:
# model.isa = auto then picks as such a CPU would, src/fast/simd.cpp). Two passes:
#   Haswell + AVX2 + avx2   the kernels of AVX2 machines: AMD Zen 1–3, Intel Haswell to Alder Lake
#   Sandybridge + AVX + sse2  the kernels of AVX machines without FMA (ours: SSE2)
# A pass this CPU cannot run (Haswell's kernels need AVX2 and FMA) is skipped and said so.
# The kernel tests run every instruction set this CPU has anyway (tests/simd_isas.hpp); the cap
# makes the model-level tests run the older ones too. Each pass checks that OpenBLAS took the core asked for
# (OPENBLAS_VERBOSE=2 names it); oneDNN's sgemm prints nothing to check it by.
#
#   tests/machinery/cli_older_kernels.sh TEST_ROFORMER
set -u
BIN="$1"
# The tests whose numbers depend on which kernels run: the products (row split, oneDNN, bf16),
# the vector kernels, fused against composed, PyTorch parity, and determinism (same setting →
# same bits; a resumed run = an uninterrupted one).
FILTER='gemm:*,simd:*,*every ISA*,adamw_vectorized*,model.products*,model.precision*'
FILTER+=',model.fused = true and false*,every RoPE variant*,linear attention ops are deterministic*'
FILTER+=',fused attention*,parity*,adamw: exported state resumes bit-identically,blas threads*'
FILTER+=',same config and seed give bit-identical metrics*,resume after an interruption*'
FILTER+=',clm: resume after*,p = 0 gives NoPE*,stacked_linear equals*,fused_attention_packed*'
FILTER+=',linear_cross_entropy equals*'
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
fails=0 passes=0
for pass in "Haswell AVX2 avx2 avx2 fma" "Sandybridge AVX sse2 avx"; do
  read -r core isa ours needs <<< "$pass"
  missing=""
  for flag in $needs; do [[ "$flags" == *" $flag "* ]] || missing+=" $flag"; done
  if [ -n "$missing" ]; then echo "skipped $core + $isa: this CPU lacks$missing"; continue; fi
  out=$(OPENBLAS_CORETYPE=$core OPENBLAS_VERBOSE=2 ONEDNN_MAX_CPU_ISA=$isa RF_MAX_CPU_ISA=$ours \
        "$BIN" --no-version -tc="$FILTER" 2>&1); rc=$?
  summary=$(grep -m1 'test cases:' <<< "$out")
  if ! grep -q "Core: $core" <<< "$out"; then
    echo "FAIL: OPENBLAS_CORETYPE=$core was not taken (OpenBLAS said: $(grep -m1 'Core:' <<< "$out"))"
    fails=$((fails + 1))
  elif [ "$rc" != 0 ] || [ -z "$summary" ]; then
    grep -B 3 -A 6 'ERROR:' <<< "$out" | head -n 40
    echo "FAIL: OpenBLAS $core + oneDNN $isa + ours $ours: $summary"
    fails=$((fails + 1))
  else
    echo "OpenBLAS $core + oneDNN $isa + ours $ours: $summary"
    passes=$((passes + 1))
  fi
done
[ "$fails" = 0 ] && [ "$passes" -gt 0 ] && echo "cli_older_kernels: PASS ($passes passes)"
[ "$passes" = 0 ] && [ "$fails" = 0 ] && echo "cli_older_kernels: FAIL (no pass could run on this CPU)"
exit $((fails > 0 || passes == 0))
