// Room — data: the [data] table of a config file, and the masking it implies.
#pragma once

#include <cstddef>
#include <string>

#include "data/mlm.hpp"

namespace rf {

// [data] — the corpus, the tokenizer and the MLM windows.
struct DataConfig {
    std::string path = "data/kjv.txt";  // UTF-8 text file to train on
    std::string tokenizer = "bpe";      // bpe | char
    size_t vocab_size = 2000;           // bpe: target vocabulary incl. the 5 special tokens
                                        // (char: ignored, the alphabet decides)
    size_t seq_len = 128;               // T: tokens per training window
    double validation_fraction = 0.05;  // share of the text (whole blocks) held out
    size_t val_windows = 256;           // fixed validation windows (fixed masks, seeded once)
    double mask_prob = 0.15;            // share of non-special tokens selected for the loss
};

namespace data {
// The BERT masking of a run: select data.mask_prob of the tokens, then 80/10/10. The one
// place a DataConfig becomes MaskingOptions (training, validation, evaluation, extrapolation).
inline MaskingOptions masking_options(const DataConfig& config) {
    MaskingOptions options;
    options.select_probability = config.mask_prob;
    return options;
}
}  // namespace data

}  // namespace rf
