// Room — io: one CSV field quoted (RFC 4180): wrapped in double quotes, each quote doubled,
// so a comma, a quote or a newline inside it cannot break the row.
#pragma once

#include <string>

namespace rf {

inline std::string csv_quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace rf
