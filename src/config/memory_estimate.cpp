// Stage 7 — config: memory estimates of evaluation and of linear attention's feature maps
// (see memory_estimate.hpp).
#include "config/memory_estimate.hpp"

#include <unistd.h>

#include <stdexcept>

#include "model/attention.hpp"
#include "tensor/format.hpp"

namespace rf {

namespace {

std::string gib(double bytes) { return format_fixed(bytes / double(1ull << 30), 1) + " GiB"; }

}  // namespace

double feature_map_bytes(const Config& c, double batch, double length) {
    const double F = double(attention_feature_size(c.model));
    return 4.0 * double(c.model.num_layers) * 8 * batch * double(c.model.num_heads) * length * F;
}

double evaluation_bytes(const Config& c, double batch, double length) {
    const double V = double(c.model.vocab_size ? c.model.vocab_size : c.data.vocab_size);
    const double C = double(c.model.hidden), F = double(c.model.ffn);
    const double L = double(c.model.num_layers), H = double(c.model.num_heads);
    const double P = double(c.position.max_positions);
    const double params = V * C + P * C + L * (4 * (C * C + C) + 2 * C * F + F + 5 * C) + C * C + V;
    // The scores of one layer, B·H·T² (issue 23's probe reported eval --seq-len 16384 of a
    // configs/tiny.toml run, 4 windows of 2 heads, at 8.5 GB ≈ 4·2·16384²·4 bytes); the
    // composed path keeps the probabilities beside them.
    const double scores = (c.model.fused ? 1 : 2) * batch * H * length * length;
    const double one_layer = batch * length * (16 * C + 3 * F) + scores;
    const double logits = 2 * batch * length * V;
    return 4.0 * (params + one_layer + logits) + feature_map_bytes(c, batch, length) / L;
}

double machine_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

void check_evaluation_memory(const Config& config, size_t batch, size_t length,
                             const std::string& what, const std::string& fix) {
    const double need = evaluation_bytes(config, double(batch), double(length));
    const double have = machine_memory_bytes();
    if (have > 0 && need > 0.8 * have)
        throw std::invalid_argument(what + " needs about " + gib(need) + " (" +
                                    std::to_string(batch) + " window(s) of " +
                                    std::to_string(length) +
                                    " tokens: T² attention scores per head) but this machine has " +
                                    gib(have) + " of memory; " + fix);
}

}  // namespace rf
