// Room — run: a run's threads (see threads.hpp).
#include "fast/threading.hpp"
#include "run/threads.hpp"

#include <cctype>
#include <cstdlib>

#include "ops/ops.hpp"
#include "fast/onednn_bf16_products.hpp"
#include "fast/onednn_products.hpp"
#include "fast/openmp.hpp"
#include "fast/simd.hpp"
#include "config/memory_estimate.hpp"

namespace rf {

size_t apply_threading(const Config& config) {
    return apply_threading(config, config.train.threads);
}

// Whether the fast path's products run in oneDNN: model.products = onednn, or auto in a build
// that has it. The composed path always multiplies with OpenBLAS.
static bool products_in_onednn(const ModelConfig& model) {
    return model.fused && (model.products == ProductLibrary::onednn ||
                           (model.products == ProductLibrary::automatic && onednn_built()));
}

size_t apply_threading(const Config& config, size_t threads) {
    // Under ulimit -v, before the first product: OpenBLAS's allocator spins, never fails.
    check_products_address_space(config, threads ? threads : configured_threads(config));
    set_simd_isa(config.model.isa);
    const ModelConfig& model = config.model;
    FloatProduct product = nullptr;  // blas_gemm(): OpenBLAS
    if (products_in_onednn(model))
        product = model.precision == Precision::bf16 ? bf16_product() : onednn_product();
    return set_threading({threads, model.fused, product}).threads;  // fast/threading.hpp
}

std::string fast_path_line(const ModelConfig& model) {
    if (!model.fused)
        return "path: composed (model.fused = false): the ops docs/reading-path.md reads, "
               "baseline build";
    const SimdKernels& kernels = simd_kernels();
    return std::string("path: fast (model.fused = true), equal to the composed ops that "
                       "docs/reading-path.md reads to float rounding (tests/machinery/"
                       "test_fused_*.cpp; model.fused = false trains those ops); ") +
           kernels.name + " kernels, " +
           std::to_string(kernels.lanes) + (sizeof(Real) == 4 ? " float" : " double") +
           " lanes (model.isa = " + enum_name(model.isa) + "; this CPU has " + supported_isas() +
           "); products: " +
           (!products_in_onednn(model)            ? "OpenBLAS"
            : model.precision == Precision::bf16 ? bf16_description()
                                                 : onednn_description()) +
           " (model.products = " + enum_name(model.products) +
           ", model.precision = " + enum_name(model.precision) + ")";
}

std::string threads_line(size_t threads) {
    if (!kOpenMP)
        return "threads " + std::to_string(threads) +
               " (a build without OpenMP: one thread, whatever train.threads asks)";
    return "threads " + std::to_string(threads) + " (OpenMP wait policy " + openmp_wait_policy() +
           ")";
}

std::string openmp_wait_policy() {
    const std::string kDefault = "libgomp's default (spin a while, then sleep)";
    const char* set = std::getenv("OMP_WAIT_POLICY");
    if (set == nullptr) return kDefault;
    // libgomp's own reading (env.c, parse_wait_policy): blanks around the word, any case.
    std::string word(set);
    word.erase(0, word.find_first_not_of(" \t\n\v\f\r"));
    word.erase(word.find_last_not_of(" \t\n\v\f\r") + 1);
    for (char& c : word) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (word == "active" || word == "passive") {
        const char* spin = std::getenv("GOMP_SPINCOUNT");
        return spin == nullptr ? word
                               : word + ", after spinning GOMP_SPINCOUNT=" + std::string(spin);
    }
    return kDefault + ": OMP_WAIT_POLICY='" + std::string(set) +
           "' is neither active nor passive, so libgomp ignored it";
}

}  // namespace rf
