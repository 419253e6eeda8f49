// libFuzzer target: BERT's WordPiece tokenizer (data/wordpiece.hpp) on arbitrary bytes, read
// both as text to tokenize and as a vocab.txt. Any vocab.txt must load or throw
// std::runtime_error naming the directory; any text must tokenize into ids inside the
// vocabulary, decode, and map to vocab.txt lines and back; what a tokenizer saves, it loads.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/wordpiece.hpp"

namespace {

void exercise(const rf::data::WordPieceTokenizer& tokenizer, const std::string& text) {
    const std::vector<int> ids = tokenizer.encode_for_model(text);
    for (const int id : ids) {
        if (id < 0 || size_t(id) >= tokenizer.vocab_size()) __builtin_trap();
        if (tokenizer.id_of_file_id(tokenizer.file_id(id)) != id) __builtin_trap();
    }
    tokenizer.decode(ids);
    tokenizer.decode(ids, true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    // the bytes as text, on a small fixed vocabulary, both casings
    static const std::vector<std::string> fixed = {
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##a", "b", "##b", "ab",
        "é",     "##é",   "中",    "the",   "##s",    ",", "'",   "$", "[",   "]"};
    for (const bool lower : {true, false})
        exercise(*rf::data::WordPieceTokenizer::from_file_order(fixed, lower), bytes);
    // the bytes as vocab.txt; a tokenizer that loads tokenizes its own file, saves and loads
    std::unique_ptr<rf::data::WordPieceTokenizer> tokenizer;
    try {
        tokenizer = rf::data::parse_wordpiece_files(bytes, "", "fuzz");
    } catch (const std::runtime_error&) { return 0; }
    exercise(*tokenizer, bytes.substr(0, 4096));
    const auto again = rf::data::parse_tokenizer(tokenizer->to_json(), "again.json");
    if (again->vocab() != tokenizer->vocab()) __builtin_trap();
    return 0;
}
