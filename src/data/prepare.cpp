// Room — data: load → split → encode → the fixed validation set (see prepare.hpp).
#include "data/prepare.hpp"

#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "data/clm.hpp"
#include "data/corpus.hpp"
#include "tensor/format.hpp"

namespace rf {

namespace {

// Text tokens in one window: mlm frames it with [CLS] … [SEP], clm does not.
size_t framing_tokens(data::Objective objective) {
    return objective == data::Objective::mlm ? data::kFramingTokens : 0;
}

// The floor any model should beat: predict every label from training frequencies.
double unigram_entropy(const std::vector<int>& train_ids, size_t vocab_size,
                       const std::vector<Batch>& batches) {
    std::vector<double> counts(vocab_size, 1.0);  // add-one smoothing
    for (int id : train_ids) counts[size_t(id)] += 1.0;
    double total = 0;
    for (double c : counts) total += c;
    double nll = 0;
    size_t n = 0;
    for (const Batch& b : batches)
        for (int label : b.labels)
            if (label != kIgnoreLabel) {
                nll -= std::log(counts[size_t(label)] / total);
                ++n;
            }
    return n ? nll / double(n) : 0.0;
}

// A vocabulary too small for the text (data.vocab_size = 6) turns most of it into [UNK]; the
// model then "predicts" [UNK] with high accuracy and learns nothing. Worth a loud warning.
void warn_if_mostly_unknown(const std::vector<int>& ids, const data::Tokenizer& tokenizer) {
    if (ids.empty()) return;
    size_t unknown = 0;
    for (int id : ids) unknown += id == data::kUnkId;
    const double share = double(unknown) / double(ids.size());
    if (share > kUnknownWarningShare)
        std::cerr << "warning: " << int(share * 100 + 0.5) << " % of the training tokens are [UNK] "
                  << "(a vocabulary of " << tokenizer.vocab_size()
                  << " tokens); accuracy will look high and mean nothing — raise data.vocab_size\n";
}

}  // namespace

PreparedData prepare_data(const DataConfig& config, size_t batch_size,
                          std::unique_ptr<data::Tokenizer>& tokenizer, data::Objective objective) {
    data::SplitOptions split_options;
    split_options.validation_fraction = config.validation_fraction;
    const data::CorpusSplit split = data::load_corpus(config.path, split_options);
    // Too short for one window, known from the byte counts before any tokenising.
    data::require_window_fits_bytes(config.path, "training", split.train_text.size(),
                                    config.seq_len, framing_tokens(objective));
    data::require_window_fits_bytes(config.path, "validation", split.validation_text.size(),
                                    config.seq_len, framing_tokens(objective));
    if (!tokenizer) {
        tokenizer = data::train_tokenizer(config.tokenizer, split.train_text, config.vocab_size);
        // The character tokenizer keeps every character it sees, up to data.vocab_size: a size
        // above the text's own characters changes nothing (the default is left unremarked).
        if (config.tokenizer == "char" && tokenizer->vocab_size() < config.vocab_size &&
            config.vocab_size != DataConfig{}.vocab_size)
            std::cerr << "note: data.vocab_size = " << config.vocab_size
                      << " is above the training text's characters (" << tokenizer->vocab_size()
                      << " tokens with the specials), so the character tokenizer has "
                      << tokenizer->vocab_size() << " and the setting changes nothing; give "
                         "data.vocab_size ≤ "
                      << tokenizer->vocab_size() << " to cap the alphabet, or leave it out\n";
    }
    PreparedData out;
    out.split_summary = split.summary();
    out.train_ids = tokenizer->encode(split.train_text);
    out.train_tokens = out.train_ids.size();
    out.validation_ids = tokenizer->encode(split.validation_text);
    const size_t framing = framing_tokens(objective);
    data::require_window_fits(config.path, "training", out.train_ids.size(), config.seq_len,
                              framing);
    data::require_window_fits(config.path, "validation", out.validation_ids.size(), config.seq_len,
                              framing);
    // The fixed validation windows of data.seq_len tokens (mlm: masks from kValidationSeed).
    if (objective == data::Objective::mlm)
        out.validation = data::make_validation_batches(
            out.validation_ids, config.seq_len, config.val_windows, batch_size,
            tokenizer->vocab_size(), kValidationSeed, data::masking_options(config));
    else
        out.validation = data::make_clm_validation_batches(out.validation_ids, config.seq_len,
                                                           config.val_windows, batch_size);
    size_t labelled = 0;
    for (const Batch& b : out.validation)
        for (int label : b.labels) labelled += label != kIgnoreLabel;
    if (labelled == 0)
        throw std::runtime_error("the validation set has no token to score: data.mask_prob = " +
                                 format_shortest(config.mask_prob) + " selected none of its " +
                                 std::to_string(out.validation.size()) +
                                 " batches' tokens; raise data.mask_prob or data.val_windows");
    warn_if_mostly_unknown(out.train_ids, *tokenizer);
    out.unigram_entropy = unigram_entropy(out.train_ids, tokenizer->vocab_size(), out.validation);
    return out;
}

std::vector<Batch> length_eval_batches(const DataConfig& config, data::Objective objective,
                                                const std::vector<int>& validation_ids,
                                                size_t length, size_t batch_size, size_t vocab_size,
                                                size_t max_text_tokens) {
    if (objective == data::Objective::clm)
        return data::make_clm_length_eval_batches(validation_ids, length, batch_size,
                                                  max_text_tokens);
    return data::make_length_eval_batches(validation_ids, length, batch_size, vocab_size,
                                          kValidationSeed, data::masking_options(config),
                                          max_text_tokens);
}

}  // namespace rf
