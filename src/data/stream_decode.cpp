// Room — data: incremental decoding for streamed output (see stream_decode.hpp).
#include "data/stream_decode.hpp"

namespace rf::data {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, std::vector<int> context)
    : tokenizer_(tokenizer), ids_(std::move(context)) {
    handed_out_ = tokenizer_.decode(ids_, true).size();
}

std::string StreamDecoder::push(int id) {
    ids_.push_back(id);
    const std::string text = tokenizer_.decode(ids_, true);  // [PAD] [CLS] [SEP] print nothing
    const size_t ready = complete_utf8_prefix(text);
    if (ready <= handed_out_) return {};
    std::string fresh = text.substr(handed_out_, ready - handed_out_);
    handed_out_ = ready;
    return fresh;
}

std::string StreamDecoder::finish() {
    const std::string text = tokenizer_.decode(ids_, true);
    std::string rest = text.size() > handed_out_ ? text.substr(handed_out_) : std::string();
    handed_out_ = text.size();
    return rest;
}

size_t complete_utf8_prefix(const std::string& text) {
    // Walk back over at most 3 continuation bytes (10xxxxxx) to the start of the last character.
    size_t start = text.size();
    for (int back = 0; back < 4 && start > 0; ++back) {
        const unsigned char byte = static_cast<unsigned char>(text[start - 1]);
        --start;
        if ((byte & 0xC0) != 0x80) break;  // an ASCII byte or a lead byte
    }
    if (start == text.size()) return text.size();
    const unsigned char lead = static_cast<unsigned char>(text[start]);
    const size_t needed = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return start + needed > text.size() ? start : text.size();
}

}  // namespace rf::data
