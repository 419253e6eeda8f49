// Stage 5 — model: sampling text from a causal LM (see generate.hpp).
#include "model/generate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "model/finite_values.hpp"
#include "tensor/format.hpp"

namespace rf {

void SamplingOptions::validate() const {
    if (max_new_tokens < 1)
        throw std::invalid_argument("max_new_tokens must be at least 1, got " +
                                    std::to_string(max_new_tokens));
    if (!(temperature >= 0) || !std::isfinite(temperature))
        throw std::invalid_argument("temperature must be a finite number ≥ 0 (0 = greedy), got " +
                                    format_shortest(temperature));
    if (top_k < 0)
        throw std::invalid_argument("top_k must be ≥ 0 (0 = no limit, 1 = greedy), got " +
                                    std::to_string(top_k));
}

int sample_next_token(const Real* logits, size_t vocab_size, const SamplingOptions& options,
                      Rng& rng) {
    // Candidates by descending logit, the lower id first on a tie: the greedy choice is first.
    const auto before = [&](size_t a, size_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    };
    const bool greedy = options.temperature == 0.0 || options.top_k == 1;
    if (greedy) {
        size_t best = 0;
        for (size_t v = 1; v < vocab_size; ++v)
            if (before(v, best)) best = v;
        return int(best);
    }
    const size_t k = options.top_k == 0 ? vocab_size : std::min(vocab_size, size_t(options.top_k));
    std::vector<size_t> order(vocab_size);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + long(k), order.end(), before);
    // p_v ∝ exp((z_v − z_max)/τ) over the k kept tokens, in double
    const double top = double(logits[order[0]]);
    std::vector<double> weight(k);
    double total = 0;
    for (size_t i = 0; i < k; ++i)
        total += weight[i] = std::exp((double(logits[order[i]]) - top) / options.temperature);
    const double u = rng.uniform() * total;
    double running = 0;
    for (size_t i = 0; i < k; ++i)
        if ((running += weight[i]) > u) return int(order[i]);
    return int(order[k - 1]);  // u within rounding of the total
}

std::vector<int> generate(RoFormer& model, const std::vector<int>& prompt, size_t context,
                          const SamplingOptions& options,
                          const std::function<void(int)>& on_token) {
    options.validate();
    if (prompt.empty())
        throw std::invalid_argument("the prompt is empty; give some text to continue");
    if (context == 0) throw std::invalid_argument("generate: the context must be at least 1 token");
    NoGradGuard no_grad;
    Rng rng(options.seed);
    std::vector<int> ids = prompt, fresh;
    for (long long i = 0; i < options.max_new_tokens; ++i) {
        const size_t T = std::min(context, ids.size());
        const std::vector<int> window(ids.end() - long(T), ids.end());  // the last ≤ L tokens
        const Tensor logits = model.logits_all(window, 1, T);           // [T, V]
        const size_t V = logits.size(1);
        require_finite_outputs("the logits of token " + std::to_string(ids.size() + 1),
                               logits.data() + (T - 1) * V, V);  // never sampled from
        const int next = sample_next_token(logits.data() + (T - 1) * V, V, options, rng);
        ids.push_back(next);
        fresh.push_back(next);
        if (on_token) on_token(next);
    }
    return fresh;
}

}  // namespace rf
