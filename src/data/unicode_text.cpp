// Room — data: BERT's character classes and accent stripping on libutf8proc.
#include "data/unicode_text.hpp"

#include <stdexcept>
#include <vector>

#include <utf8proc.h>

#include "data/utf8.hpp"

namespace rf::data::unicode {

namespace {
utf8proc_category_t category_of(char32_t cp) {
    return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}
}  // namespace

bool is_dropped_by_bert(char32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return false;
    if (cp == 0 || cp == kReplacementChar) return true;
    switch (category_of(cp)) {
        case UTF8PROC_CATEGORY_CC:
        case UTF8PROC_CATEGORY_CF:
        case UTF8PROC_CATEGORY_CS:
        case UTF8PROC_CATEGORY_CO:
        case UTF8PROC_CATEGORY_CN:
            return true;
        default:
            return false;
    }
}

bool is_bert_whitespace(char32_t cp) {
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') return true;
    const auto category = category_of(cp);
    return category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL ||
           category == UTF8PROC_CATEGORY_ZP;
}

bool is_bert_punctuation(char32_t cp) {
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
        (cp >= 123 && cp <= 126))
        return true;
    switch (category_of(cp)) {
        case UTF8PROC_CATEGORY_PC:
        case UTF8PROC_CATEGORY_PD:
        case UTF8PROC_CATEGORY_PS:
        case UTF8PROC_CATEGORY_PE:
        case UTF8PROC_CATEGORY_PI:
        case UTF8PROC_CATEGORY_PF:
        case UTF8PROC_CATEGORY_PO:
            return true;
        default:
            return false;
    }
}

bool is_cjk_ideograph(char32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) ||    // CJK Unified Ideographs
           (cp >= 0x3400 && cp <= 0x4DBF) ||    // extension A
           (cp >= 0x20000 && cp <= 0x2A6DF) ||  // extension B
           (cp >= 0x2A700 && cp <= 0x2B73F) ||  // extension C
           (cp >= 0x2B740 && cp <= 0x2B81F) ||  // extension D
           (cp >= 0x2B820 && cp <= 0x2CEAF) ||  // extension E
           (cp >= 0xF900 && cp <= 0xFAFF) ||    // Compatibility Ideographs
           (cp >= 0x2F800 && cp <= 0x2FA1F);    // Compatibility Ideographs Supplement
}

std::u32string strip_accents(const std::u32string& text) {
    if (text.empty()) return text;
    // utf8proc decomposes UTF-8: encode, decompose into code points (a first call sizes the
    // buffer), keep what is not a non-spacing mark.
    std::string bytes;
    for (const char32_t cp : text) append_utf8(bytes, cp);
    const auto* input = reinterpret_cast<const utf8proc_uint8_t*>(bytes.data());
    const auto options = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_STABLE);
    std::vector<utf8proc_int32_t> decomposed(text.size() * 2 + 4);
    utf8proc_ssize_t count =
        utf8proc_decompose(input, utf8proc_ssize_t(bytes.size()), decomposed.data(),
                           utf8proc_ssize_t(decomposed.size()), options);
    if (count > utf8proc_ssize_t(decomposed.size())) {
        decomposed.resize(size_t(count));
        count = utf8proc_decompose(input, utf8proc_ssize_t(bytes.size()), decomposed.data(), count,
                                   options);
    }
    if (count < 0)  // append_utf8 wrote valid UTF-8, so this is utf8proc out of memory
        throw std::runtime_error(std::string("cannot decompose text: ") + utf8proc_errmsg(count));
    std::u32string kept;
    kept.reserve(size_t(count));
    for (utf8proc_ssize_t i = 0; i < count; ++i)
        if (utf8proc_category(decomposed[size_t(i)]) != UTF8PROC_CATEGORY_MN)
            kept.push_back(char32_t(decomposed[size_t(i)]));
    return kept;
}

char32_t to_lower(char32_t cp) {
    return char32_t(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

}  // namespace rf::data::unicode
