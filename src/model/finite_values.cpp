// Stage 5 — model: non-finite values are an error (see finite_values.hpp).
#include "model/finite_values.hpp"

#include <cmath>
#include <stdexcept>

#include "tensor/format.hpp"

namespace rf {

namespace {
// What a non-finite output means and what to do, the same sentence wherever it is found.
const char* const kOutputsNotFinite =
    "; the model's outputs are not finite — the candidates: diverged training or weights so "
    "large that a product overflows float32 (use an earlier checkpoint, or train again with a "
    "lower train.lr), or a setting that scales the scores (position.scaling's factors: check "
    "the --set values and the run's config.toml)";

std::string located(const Real* values, size_t i, size_t n) {
    return format_shortest(double(values[i])) + " (element " + std::to_string(i) + " of " +
           std::to_string(n) + ")";
}
}  // namespace

size_t first_non_finite(const Real* values, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (!std::isfinite(values[i])) return i;
    return n;
}

void require_finite_outputs(const std::string& what, const Real* values, size_t n) {
    const size_t i = first_non_finite(values, n);
    if (i < n)
        throw std::runtime_error(what + " hold " + located(values, i, n) + kOutputsNotFinite);
}

void require_finite_output(const std::string& what, double value) {
    if (!std::isfinite(value))
        throw std::runtime_error(what + " is " + format_shortest(value) + kOutputsNotFinite);
}

void require_finite_parameters(const std::string& context,
                               const std::vector<NamedParameter>& parameters) {
    for (const NamedParameter& p : parameters) {
        const Real* values = p.tensor.data();
        const size_t n = p.tensor.numel(), i = first_non_finite(values, n);
        if (i < n)
            throw std::runtime_error(
                context + ": parameter '" + p.tensor.name() + "' holds " + located(values, i, n) +
                "; the update diverged (train.lr too high, or train.eps / train.weight_decay out "
                "of scale) — the checkpoint was not written; train again with a lower train.lr");
    }
}

}  // namespace rf
