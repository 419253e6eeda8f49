// Stage 1 — tensor: numbers as text, the one place every message, log line and file that
// prints a number gets its formatting from (shape_str, for shapes, is in tensor.hpp).
#pragma once

#include <string>

namespace rf {

// Fixed notation with `digits` after the point: format_fixed(2.71828, 4) = "2.7183".
std::string format_fixed(double value, int digits = 4);

// The shortest text that reads back to exactly `value` (std::to_chars), always with a point,
// an exponent, "inf" or "nan" so that TOML reads it as a float: 0.1 → "0.1", 2 → "2.0".
std::string format_shortest(double value);

// printf-style for one number, e.g. format_printf("%.3g", x). `pattern` must consume exactly
// one double.
std::string format_printf(const char* pattern, double value);

}  // namespace rf
