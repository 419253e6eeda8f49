// libFuzzer target: corpus reading (data/corpus.hpp: decode_text, split_corpus) and the
// character tokenizer trained on it. Any input must be read or refused with
// std::runtime_error; text that is read must split into train + validation blocks and
// encode with ids inside the vocabulary.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "data/corpus.hpp"
#include "data/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string raw(reinterpret_cast<const char*>(data), size);
    rf::data::CorpusSplit split;
    try {
        split = rf::data::split_corpus(rf::data::decode_text(raw, "fuzz.txt"), {}, "fuzz.txt");
    } catch (const std::runtime_error&) { return 0; }
    if (split.n_blocks < 2 || split.validation_blocks.empty()) __builtin_trap();
    for (const char* kind : {"char", "bpe"}) {
        const auto tokenizer = rf::data::train_tokenizer(kind, split.train_text, 40);
        for (int id : tokenizer->encode(split.validation_text))
            if (id < 0 || size_t(id) >= tokenizer->vocab_size()) __builtin_trap();
    }
    return 0;
}
