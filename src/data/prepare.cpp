// Stage 6 — data: load → split → encode → the fixed validation set (see prepare.hpp).
#include "data/prepare.hpp"

#include <cmath>

#include "data/corpus.hpp"

namespace rf {

PreparedData prepare_data(const DataConfig& config, size_t batch_size,
                          std::unique_ptr<data::Tokenizer>& tokenizer) {
    data::SplitOptions split_options;
    split_options.validation_fraction = config.validation_fraction;
    const data::CorpusSplit split = data::load_corpus(config.path, split_options);
    if (!tokenizer)
        tokenizer = data::train_tokenizer(config.tokenizer, split.train_text, config.vocab_size);
    PreparedData out;
    out.split_summary = split.summary();
    out.train_ids = tokenizer->encode(split.train_text);
    out.validation_ids = tokenizer->encode(split.validation_text);
    data::require_window_fits(config.path, "training", out.train_ids.size(), config.seq_len);
    data::require_window_fits(config.path, "validation", out.validation_ids.size(), config.seq_len);
    // The fixed validation windows of data.seq_len tokens, masks from kValidationSeed.
    out.validation = data::make_validation_batches(
        out.validation_ids, config.seq_len, config.val_windows, batch_size, tokenizer->vocab_size(),
        kValidationSeed, data::masking_options(config));

    // The floor any model should beat: predict every masked token from training frequencies.
    std::vector<double> counts(tokenizer->vocab_size(), 1.0);  // add-one smoothing
    for (int id : out.train_ids) counts[size_t(id)] += 1.0;
    double total = 0;
    for (double c : counts) total += c;
    double nll = 0;
    size_t n = 0;
    for (const data::MlmBatch& b : out.validation)
        for (int label : b.labels)
            if (label != data::kIgnoreLabel) {
                nll -= std::log(counts[size_t(label)] / total);
                ++n;
            }
    out.masked_unigram_entropy = n ? nll / double(n) : 0.0;
    return out;
}

}  // namespace rf
