// Room — fast: the fast path's settings, owned here and read here: model.fused, model.isa,
// model.products and model.precision. They live in the config file's [model] table, beside the
// model's size, but the model itself never sees them (src/model/model_config.hpp has none): the
// command line hands them to assembly, which builds the ops a model runs, and to the run's
// threading (src/run/threads.cpp). This file and fast_config.cpp are the one place that says
// what each setting changes.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "fast/threading.hpp"
#include "model/swappable_ops.hpp"
#include "tensor/named_enum.hpp"

namespace rf {

// model.isa: the vector instruction set of the fast path's kernels (src/fast/simd.hpp says
// what each means and chooses them): auto (the widest the CPU has) | sse2 | avx2 | avx512 on
// x86-64; auto | neon on arm64
enum class SimdIsa { automatic, sse2, avx2, avx512, neon };
constexpr std::array<NamedValue<SimdIsa>, 5> named_values(SimdIsa) {
    return {{{SimdIsa::automatic, "auto"},
             {SimdIsa::sse2, "sse2"},
             {SimdIsa::avx2, "avx2"},
             {SimdIsa::avx512, "avx512"},
             {SimdIsa::neon, "neon"}}};
}

// model.products: the fast path's large products' library (src/fast/onednn_products.hpp): auto
// (the default: onednn when the build found Debian's libdnnl, else openblas) | openblas | onednn
enum class ProductLibrary { automatic, openblas, onednn };
constexpr std::array<NamedValue<ProductLibrary>, 3> named_values(ProductLibrary) {
    return {{{ProductLibrary::automatic, "auto"},
             {ProductLibrary::openblas, "openblas"},
             {ProductLibrary::onednn, "onednn"}}};
}

// model.precision: the number format of the fast path's large products' operands: fp32 (the
// default; the composed path is fp32 only) | bf16 (rounded to bfloat16, multiplied by oneDNN
// with float32 sums and results; everything else stays float32: docs/mixed-precision.md)
enum class Precision { fp32, bf16 };
constexpr std::array<NamedValue<Precision>, 2> named_values(Precision) {
    return {{{Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}}};
}

// The fast path's keys (config file: [model] fused, isa, products, precision).
struct FastConfig {
    bool fused = true;                 // the fast path: what it runs instead of the composed ops
                                       // (fused attention tiles, GELU, residual LayerNorm, packed
                                       // q, k, v, …) is the model's swappable ops
                                       // (model/swappable_ops.hpp); false runs the composed ops
                                       // a student reads first
    SimdIsa isa = SimdIsa::automatic;  // the fast path's vector instructions: auto (the widest
                                       // the CPU has) | sse2 | avx2 | avx512 | neon (simd.hpp)
    ProductLibrary products = ProductLibrary::automatic;  // auto | openblas | onednn
    Precision precision = Precision::fp32;  // the products' operands: fp32 | bf16 (model.fused
                                            // = true, oneDNN's products only)
};

// ---- what each key changes ------------------------------------------------------------------
// The ops a softmax model is handed: none for fused = false (the model then calls the composed
// ops itself, model/swappable_ops.hpp), the fast path's twins (fast_kernels.hpp) otherwise.
std::shared_ptr<const SwappableOps> path_ops(const FastConfig& fast);
// Whether the fast path's products run in oneDNN: products = onednn, or auto in a build that
// has it. The composed path always multiplies with OpenBLAS.
bool products_in_onednn(const FastConfig& fast);
// The thread split and the product library a run installs (fast/threading.hpp), `threads`
// threads (0 = every core).
Threading threading_for(const FastConfig& fast, size_t threads);
// How many T×T tensors a layer keeps per head: the fast path's attention keeps the scores
// only, the composed path the probabilities beside them (memory estimates).
double attention_score_copies(const FastConfig& fast);
// The rules between these keys and this machine, in one message each: bf16 needs the fast path
// and oneDNN, onednn needs the fast path and a build with oneDNN, an ISA the CPU has.
// Throws std::invalid_argument naming the key and the fix.
void validate_fast_config(const FastConfig& fast);
// The notes for the keys this process cannot honour, each replaced by its portable value
// ("this run was trained with model.precision = bf16; this CPU has no bf16 products: reading
// it in fp32"): what a reader of a run does (src/run/run_config.hpp); nothing changes, and no
// note, when it can.
std::vector<std::string> make_portable(FastConfig& fast);
// The run log's line about the path after the threading is applied: "path: fast (…) avx512
// kernels, 16 float lanes …", or that fused = false runs the composed ops.
std::string fast_path_line(const FastConfig& fast);

}  // namespace rf
