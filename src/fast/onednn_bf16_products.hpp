// Room — fast: the large products in bfloat16 (model.precision = bf16; docs/mixed-precision.md).
//
// bfloat16 keeps float32's 8 exponent bits and 7 of its 23 mantissa bits: the same range, about
// 3 significant digits. A CPU with AVX512_BF16 multiplies pairs of them and adds the products
// into float32 sums at twice float32's rate. The block product installed here takes the same
// float32 operands as gemm() (ops/gemm.hpp), rounds each to the nearest bfloat16 (ties to
// even), and lets oneDNN's matmul primitive multiply them with float32 sums and a float32
// result:  C[M,N] = bf16(op(A))·bf16(op(B)) + beta·C.
// Only the operands are rounded: the weights the optimizer updates, C, and everything outside
// the products (LayerNorm, softmax, RoPE, the loss, AdamW) stay float32. Every operand is
// rounded again in every product, weights included: AdamW updates a weight in place, so a
// block product, which sees only a pointer, could not tell a cached bfloat16 copy from a stale
// one; what the rounding passes cost is measured in docs/results.md, "bf16 products".
#pragma once

#include <string>

#include "fast/threading.hpp"

namespace rf {

// Whether this CPU has AVX512_BF16 (cpuid): the instruction that rounds float32 to bfloat16
// and the bfloat16 dot products oneDNN uses without AMX. (Every CPU with AMX_BF16 has it too.)
// (False, too, where ONEDNN_MAX_CPU_ISA keeps oneDNN below AVX512_CORE_BF16.)
bool cpu_has_bf16();
// The ONEDNN_MAX_CPU_ISA word when it alone keeps bf16 from this CPU, else "".
std::string onednn_bf16_cap();
// "" when model.precision = bf16 can run here, else the one reason it cannot (no oneDNN in
// this build, this CPU, the double build), naming what would fix it.
std::string bf16_unavailable();
// "oneDNN 2.6.3 matmul, bf16 operands, f32 sums" — for the run header.
std::string bf16_description();
// The block product model.precision = bf16 installs (ops/gemm.hpp, FloatProduct); throws
// std::invalid_argument naming model.precision when bf16_unavailable() is not empty.
FloatProduct bf16_product();

}  // namespace rf
