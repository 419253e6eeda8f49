// Stage 1 — tensor: numbers as text (see format.hpp).
#include "tensor/format.hpp"

#include <charconv>
#include <cstdio>

namespace rf {

std::string format_fixed(double value, int digits) {
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

std::string format_shortest(double value) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    std::string text(buffer, result.ptr);
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
}

std::string format_printf(const char* pattern, double value) {
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, pattern, value);
    return buffer;
}

}  // namespace rf
