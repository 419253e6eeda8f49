// Room — fast: what each of the fast path's settings changes (see fast_config.hpp).
#include "fast/fast_config.hpp"

#include <stdexcept>

#include "fast/fast_kernels.hpp"
#include "fast/onednn_bf16_products.hpp"
#include "fast/onednn_products.hpp"
#include "fast/simd.hpp"

namespace rf {

std::shared_ptr<const SwappableOps> path_ops(const FastConfig& fast) {
    return fast.fused ? fast_kernels() : nullptr;
}

bool products_in_onednn(const FastConfig& fast) {
    return fast.fused && (fast.products == ProductLibrary::onednn ||
                          (fast.products == ProductLibrary::automatic && onednn_built()));
}

Threading threading_for(const FastConfig& fast, size_t threads) {
    FloatProduct product = nullptr;  // blas_gemm(): OpenBLAS
    if (products_in_onednn(fast))
        product = fast.precision == Precision::bf16 ? bf16_product() : onednn_product();
    return {threads, fast.fused, product};
}

double attention_score_copies(const FastConfig& fast) { return fast.fused ? 1 : 2; }

void validate_fast_config(const FastConfig& fast) {
    resolve_isa(fast.isa);  // throws naming model.isa when this CPU lacks the instruction set
    if (fast.precision == Precision::bf16) {
        // The composed path is the one a student reads line by line against the paper: float32
        // throughout. bf16 is oneDNN's, so it is asked for by name, not implied. Every reason
        // in one message: fixing one must not reveal the next.
        std::string needs, set;
        if (!fast.fused) {
            needs = "model.fused = true (the composed path multiplies in float32 only)";
            set = "model.fused = true";
        }
        if (fast.products == ProductLibrary::openblas) {
            const std::string also = needs.empty() ? "" : " and ";
            needs += also + "model.products = auto or onednn (it multiplies in oneDNN, not OpenBLAS)";
            set += also + "model.products = auto";
        }
        // no oneDNN, no AVX512_BF16, or the double build: only fp32 works here
        if (const std::string unavailable = bf16_unavailable(); !unavailable.empty())
            throw std::invalid_argument(
                unavailable + (needs.empty() ? "" : " — bf16 also needs " + needs));
        if (!needs.empty())
            throw std::invalid_argument("model.precision = bf16 needs " + needs + "; set " + set +
                                        ", or model.precision = fp32");
    }
    if (fast.products == ProductLibrary::onednn) {
        if (!fast.fused)
            throw std::invalid_argument(
                "model.products = onednn needs model.fused = true (the composed path always "
                "multiplies with OpenBLAS); set model.products = openblas or model.fused = true");
        onednn_product();  // throws naming model.products when the build has no oneDNN
    }
}

std::string fast_path_line(const FastConfig& fast) {
    if (!fast.fused)
        return "path: composed (model.fused = false): the ops docs/reading-path.md reads, "
               "baseline build";
    const SimdKernels& kernels = simd_kernels();
    return std::string("path: fast (model.fused = true), equal to the composed ops that "
                       "docs/reading-path.md reads to float rounding (tests/machinery/"
                       "test_fused_*.cpp; model.fused = false trains those ops); ") +
           kernels.name + " kernels, " +
           std::to_string(kernels.lanes) + (sizeof(Real) == 4 ? " float" : " double") +
           " lanes (model.isa = " + enum_name(fast.isa) + "; this CPU has " + supported_isas() +
           "); products: " +
           (!products_in_onednn(fast)            ? "OpenBLAS"
            : fast.precision == Precision::bf16 ? bf16_description()
                                                : onednn_description()) +
           " (model.products = " + enum_name(fast.products) +
           ", model.precision = " + enum_name(fast.precision) + ")";
}

std::vector<std::string> make_portable(FastConfig& fast) {
    std::vector<std::string> notes;
    const std::string trained = "this run was trained with ";
    if (fast.isa != SimdIsa::automatic && !cpu_supports(fast.isa)) {
        notes.push_back(trained + "model.isa = " + enum_name(fast.isa) + "; this CPU has " +
                        supported_isas() + ": reading it with model.isa = auto (" +
                        enum_name(widest_isa()) + ")");
        fast.isa = SimdIsa::automatic;
    }
    if (fast.products == ProductLibrary::onednn && !onednn_built()) {
        notes.push_back(trained +
                        "model.products = onednn; this build has no oneDNN: reading it with "
                        "OpenBLAS's products (model.products = auto)");
        fast.products = ProductLibrary::automatic;
    }
    if (fast.precision == Precision::bf16 && !bf16_unavailable().empty()) {
        const std::string cap = onednn_bf16_cap();
        notes.push_back(trained + "model.precision = bf16; " +
                        (!cap.empty()
                             ? "ONEDNN_MAX_CPU_ISA=" + cap + " keeps oneDNN from its bf16 products"
                         : cpu_has_bf16() ? std::string("this build has no bf16 products")
                                          : std::string("this CPU has no bf16 products")) +
                        ": reading it in fp32");
        fast.precision = Precision::fp32;
    }
    return notes;
}

}  // namespace rf
