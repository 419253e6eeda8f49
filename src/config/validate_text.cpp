// Room — config: UTF-8 of the free-text keys (see validate_text.hpp).
#include "config/validate_text.hpp"

#include <stdexcept>

namespace rf {

bool is_valid_utf8(const std::string& text) {
    size_t i = 0;
    while (i < text.size()) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        size_t extra = 0;
        unsigned min = 0, code = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            extra = 1, min = 0x80, code = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2, min = 0x800, code = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3, min = 0x10000, code = c & 0x07;
        } else {
            return false;  // a continuation byte without a lead, or 0xF8…0xFF
        }
        if (i + extra >= text.size()) return false;  // cut short
        for (size_t k = 1; k <= extra; ++k) {
            const unsigned char d = static_cast<unsigned char>(text[i + k]);
            if ((d & 0xC0) != 0x80) return false;
            code = (code << 6) | (d & 0x3F);
        }
        if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
        i += extra + 1;
    }
    return true;
}

void validate_text(const Config& config) {
    if (!is_valid_utf8(config.data.path))
        throw std::invalid_argument(
            "data.path is not valid UTF-8 text (a file name in another encoding); rename the "
            "file, or link it under a UTF-8 name (ln -s) and give that name");
}

}  // namespace rf
