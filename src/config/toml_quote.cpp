// Room — config: quoting strings for TOML (see toml_quote.hpp).
#include "config/toml_quote.hpp"

#include <cstdio>

namespace rf {

std::string quote_toml(const std::string& s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"')
            out += "\\\"";
        else if (ch == '\\')
            out += "\\\\";
        else if (ch == '\n')
            out += "\\n";
        else if (ch == '\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else
            out += ch;
    }
    return out + "\"";
}

}  // namespace rf
