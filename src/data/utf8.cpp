// Room — data: UTF-8 decoding and encoding (see utf8.hpp).
//
// Valid sequences (RFC 3629):  1 byte  0xxxxxxx                       U+0000..U+007F
//                              2 bytes 110xxxxx 10xxxxxx              U+0080..U+07FF
//                              3 bytes 1110xxxx 10xxxxxx 10xxxxxx     U+0800..U+FFFF (no
//                              surrogates) 4 bytes 11110xxx 10xxxxxx ×3           U+10000..U+10FFFF
#include "data/utf8.hpp"

namespace rf::data {

char32_t decode_one_utf8(const std::string& text, size_t pos, size_t& length) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(pos);
    length = 1;
    if (lead < 0x80) return lead;
    size_t n_continuation;
    char32_t code_point;
    char32_t smallest;  // shortest-form check: overlong encodings are invalid
    if ((lead & 0xE0) == 0xC0) {
        n_continuation = 1;
        code_point = lead & 0x1F;
        smallest = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        n_continuation = 2;
        code_point = lead & 0x0F;
        smallest = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        n_continuation = 3;
        code_point = lead & 0x07;
        smallest = 0x10000;
    } else
        return kReplacementChar;  // stray continuation byte or 0xF8..0xFF
    if (pos + n_continuation >= text.size()) return kReplacementChar;  // truncated at the end
    for (size_t k = 1; k <= n_continuation; ++k) {
        const unsigned char next = byte(pos + k);
        if ((next & 0xC0) != 0x80) return kReplacementChar;
        code_point = (code_point << 6) | (next & 0x3F);
    }
    if (code_point < smallest || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF))
        return kReplacementChar;
    length = n_continuation + 1;
    return code_point;
}

std::vector<char32_t> decode_utf8(const std::string& text) {
    std::vector<char32_t> code_points;
    code_points.reserve(text.size());
    size_t length = 0;
    for (size_t pos = 0; pos < text.size(); pos += length)
        code_points.push_back(decode_one_utf8(text, pos, length));
    return code_points;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacementChar;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string encode_utf8(char32_t code_point) {
    std::string out;
    append_utf8(out, code_point);
    return out;
}

size_t count_invalid_utf8_bytes(const std::string& text) {
    size_t invalid = 0, length = 0;
    for (size_t pos = 0; pos < text.size(); pos += length) {
        const char32_t cp = decode_one_utf8(text, pos, length);
        // a genuine U+FFFD in the text is 3 bytes long; an invalid byte is 1
        if (cp == kReplacementChar && length == 1) ++invalid;
    }
    return invalid;
}

}  // namespace rf::data
