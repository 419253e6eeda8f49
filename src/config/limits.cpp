// Room — config: the sanity limits of a Config (see config.hpp, validate_limits). Every
// size a config decides is bounded before anything is allocated: each key has a ceiling far
// above what a laptop CPU can train, and the whole run's memory (parameters, AdamW state,
// activations) is estimated and checked against the machine's memory.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <variant>

#include "config/config.hpp"
#include "config/memory_estimate.hpp"
#include "tensor/format.hpp"

namespace rf {

namespace {

struct SizeLimit {
    const char* key;
    size_t max;
    const char* why;
};

// Ceilings: large enough for any run this project can train, small enough that a typo
// (an extra zero, 1e8 for 1e3) is caught before it allocates.
const SizeLimit kSizeLimits[] = {
    {"model.vocab_size", 1'000'000, "token rows"},
    {"model.hidden", 16'384, "the width of every token vector"},
    {"model.embedding_size", 16'384, "the width of the embedding tables"},
    {"model.type_vocab_size", 1'024, "token types (segments)"},
    {"model.num_heads", 1'024, "attention heads"},
    {"model.num_layers", 1'024, "encoder blocks"},
    {"model.ffn", 65'536, "the feed-forward width"},
    {"model.random_features", 16'384, "FAVOR+ features per head"},
    {"position.max_positions", 1'048'576, "rows of the learned position table"},
    {"data.vocab_size", 1'000'000, "the tokenizer's vocabulary"},
    {"data.seq_len", 65'536, "tokens per window"},
    {"data.val_windows", 1'000'000, "validation windows"},
    {"train.batch_size", 65'536, "windows per step"},
    {"train.steps", 1'000'000'000, "optimizer updates"},
    {"train.warmup_steps", 1'000'000'000, "warmup updates"},
    {"train.threads", 1'024, "worker threads"},
};

std::string gib(double bytes) { return format_fixed(bytes / double(1ull << 30), 1) + " GiB"; }

}  // namespace

// Rough bytes a training step needs, in double so that absurd sizes cannot overflow (declared
// in memory_estimate.hpp: training checks it against ulimit -v too).
double estimated_training_bytes(const Config& c) {
    const double V = double(c.model.vocab_size ? c.model.vocab_size : c.data.vocab_size);
    const double C = double(c.model.hidden), F = double(c.model.ffn);
    const double E = double(embedding_width(c.model));
    const double L = double(c.model.num_layers), H = double(c.model.num_heads);
    const double T = double(c.data.seq_len), B = double(c.train.batch_size);
    const double P = double(c.position.max_positions);
    const double layer_params = 4 * (C * C + C) + 2 * C * F + F + 5 * C;
    const double params = (V + double(c.model.type_vocab_size)) * E +
                          (c.position.scheme == PositionKind::learned ? P * C : 0) +
                          (E != C ? E * C + C : 0) + L * layer_params + C * E + 3 * E + V;
    // Per layer the graph keeps ~16 vectors of C, 3 of F and 3 T×T score maps per head; the
    // head's logits (all positions, the worst case) twice.
    const double activations = B * T * (L * (16 * C + 3 * F + 3 * H * T) + 2 * V);
    // float32: weights, grads, two AdamW moments; + linear attention's feature maps
    return 4.0 * (4 * params + activations) + feature_map_bytes(c, B, T);
}

void validate_finite(const Config& config) {
    Config copy = config;  // the key table hands out mutable pointers
    for (const ConfigField& f : config_fields(copy))
        if (const double* const* v = std::get_if<double*>(&f.value); v && !std::isfinite(**v))
            throw std::invalid_argument(f.name() + " = " + format_shortest(**v) +
                                        " is not a finite number; give a finite value");
}

void check_size_limit(const std::string& key, size_t value, const std::string& shown_as) {
    for (const SizeLimit& limit : kSizeLimits) {
        if (key != limit.key) continue;
        if (value > limit.max)
            throw std::invalid_argument(shown_as + " = " + std::to_string(value) +
                                        " is over the limit of " + std::to_string(limit.max) +
                                        " (" + limit.why + "); use a smaller value");
        return;
    }
    throw std::logic_error("check_size_limit: no limit for " + key);
}

void validate_limits(const Config& config) {
    Config copy = config;
    for (const SizeLimit& limit : kSizeLimits)
        check_size_limit(limit.key, *std::get<size_t*>(find_config_field(copy, limit.key).value),
                         limit.key);
    // The corpus in memory (its text, splits and token ids) beside the model and its step.
    const double corpus = corpus_memory_bytes(config);
    const double need = estimated_training_bytes(config) + corpus, have = machine_memory_bytes();
    if (have > 0 && need > 0.8 * have && corpus > 0.5 * need)
        throw std::invalid_argument(
            "this config needs about " + gib(need) + " to train, " + gib(corpus) +
            " of it for data.path '" + config.data.path + "' (" +
            format_fixed(double(corpus / kCorpusMemoryPerByte) / double(1 << 20), 1) +
            " MiB of text, about " + format_fixed(kCorpusMemoryPerByte, 0) +
            " bytes of memory per byte once split and tokenized) but this machine has " +
            gib(have) + " of memory; use a smaller data.path (at most about " +
            format_fixed(std::max(0.0, 0.8 * have - (need - corpus)) / kCorpusMemoryPerByte /
                             double(1 << 20),
                         0) +
            " MiB here)");
    if (have > 0 && need > 0.8 * have)
        throw std::invalid_argument(
            "this config needs about " + gib(need) +
            " to train (parameters, AdamW state and activations of train.batch_size × "
            "data.seq_len" + (corpus > 0 ? ", and " + gib(corpus) + " for data.path" : "") +
            ") but this machine has " +
            gib(have) +
            " of memory; make model.hidden, model.num_layers, model.ffn, model.vocab_size, "
            "data.seq_len or train.batch_size smaller" +
            std::string(feature_map_bytes(config, double(config.train.batch_size),
                                          double(config.data.seq_len)) > 0.5 * need
                            ? ", above all model.random_features (FAVOR's feature maps)"
                            : ""));
}

}  // namespace rf
