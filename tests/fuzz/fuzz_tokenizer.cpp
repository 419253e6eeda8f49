// libFuzzer target: tokenizer.json (data/tokenizer.hpp, parse_tokenizer) on arbitrary text.
// Any input must load or throw std::runtime_error naming the file; a tokenizer that loads must
// encode and decode its own vocabulary without a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "data/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::unique_ptr<rf::data::Tokenizer> tokenizer;
    try {
        tokenizer = rf::data::parse_tokenizer(text, "fuzz.json");
    } catch (const std::runtime_error&) { return 0; }
    std::string all;
    for (const std::string& token : tokenizer->vocab()) all += token;
    const std::vector<int> ids = tokenizer->encode(all.substr(0, 4096));
    for (int id : ids)
        if (id < 0 || size_t(id) >= tokenizer->vocab_size()) __builtin_trap();
    tokenizer->decode(ids);
    rf::data::parse_tokenizer(tokenizer->to_json(), "again.json");  // what it saves, it loads
    return 0;
}
