// Room — cli: bounds on what the command line decides — text sizes, element counts — so
// that no argument can make a command allocate without limit or wrap a size to a small one;
// and the checks that make every argument mean what it says (a 0 count, a negative index or
// an empty name is refused with why, never read as "no limit", "all" or "the default").
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "config/validate_text.hpp"  // is_valid_utf8

namespace rf::cli {

// Default of --max-text-bytes (fill-mask, generate, tokenize): a few paragraphs. Attention
// costs T² per head, so a sentence of 100 kB would need gigabytes.
inline constexpr size_t kDefaultMaxTextBytes = 16384;

// Throws std::invalid_argument naming `what` when `text` is over `limit` bytes, or is not
// valid UTF-8 (a stray byte would otherwise be dropped or turned into [UNK] without a word).
inline void check_text_size(const std::string& text, size_t limit, const std::string& what) {
    if (!is_valid_utf8(text))
        throw std::invalid_argument(what + " is not valid UTF-8 text; pass it in UTF-8 (e.g. "
                                    "iconv -t UTF-8)");
    if (text.size() > limit)
        throw std::invalid_argument(what + " has " + std::to_string(text.size()) +
                                    " bytes, over the limit of " + std::to_string(limit) +
                                    "; shorten it or raise --max-text-bytes");
}

// a · b · c … without wrapping: throws std::invalid_argument `message` when the product is
// over `limit` (or would overflow size_t on the way).
inline size_t bounded_product(std::initializer_list<size_t> factors, size_t limit,
                              const std::string& message) {
    size_t product = 1;
    for (size_t f : factors) {
        if (f != 0 && product > limit / f) throw std::invalid_argument(message);
        product *= f;
    }
    if (product > limit) throw std::invalid_argument(message);
    return product;
}

// Why a text is not an unsigned whole number, or "" when it is one: digits only, so "-1" is
// refused rather than wrapped to 2^64 − 1, and "1e12" rather than truncated; and at most
// 2^64 − 1, so 18446744073709551616 is refused rather than saturated.
inline std::string unsigned_number_error(const std::string& text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return "'" + text + "' is not a whole number ≥ 0 (digits only)";
    const std::string digits = text.substr(std::min(text.find_first_not_of('0'), text.size()));
    const std::string largest = "18446744073709551615";
    if (digits.size() > largest.size() || (digits.size() == largest.size() && digits > largest))
        return "'" + text + "' is out of range (the largest is " + largest + ")";
    return "";
}

// CLI11 check for an unsigned option (unsigned_number_error). `hint`, when given, follows a
// refusal: what to type instead (e.g. "leave --layer out for every layer").
inline CLI::Validator unsigned_number(const std::string& hint = "") {
    return CLI::Validator(
        [hint](std::string& text) -> std::string {
            const std::string error = unsigned_number_error(text);
            return error.empty() || hint.empty() ? error : error + "; " + hint;
        },
        "UINT", "unsigned");
}

// CLI11 check for a count that has to be at least `least`: unsigned_number, then the value.
// A smaller one is refused with `why` — what it would do and what to give instead — rather
// than read as "no limit" or "the default" (e.g. --seeds 0, --stop-after 0).
inline CLI::Validator count_at_least(unsigned long long least, const std::string& why) {
    return CLI::Validator(
        [least, why](std::string& text) -> std::string {
            if (std::string error = unsigned_number_error(text); !error.empty()) return error;
            if (std::stoull(text) >= least) return "";
            return "'" + text + "' is less than " + std::to_string(least) + ": " + why;
        },
        "COUNT", "count_at_least");
}

// CLI11 check for a name (a file, a directory, a task): "" would name nothing, and the
// option would fall back to its default or to standard output without a word, so it is
// refused; `if_left_out` says what leaving the option out does.
inline CLI::Validator non_empty(const std::string& if_left_out) {
    return CLI::Validator(
        [if_left_out](std::string& text) -> std::string {
            return text.empty() ? "an empty value names nothing; " + if_left_out : "";
        },
        "TEXT", "non_empty");
}

// CLI11 check for a signed whole-number option (a sign, then digits) that fits in 64 bits:
// beyond ±9223372036854775807 is an error, not saturated. (The command's own check gives
// the range that makes sense, e.g. "--top-k must be ≥ 0".)
inline CLI::Validator integer_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
            if (text.size() == start ||
                text.find_first_not_of("0123456789", start) != std::string::npos)
                return "'" + text + "' is not a whole number (digits only)";
            std::string digits = text.substr(start);
            digits = digits.substr(std::min(digits.find_first_not_of('0'), digits.size()));
            const std::string largest = "9223372036854775807";
            if (digits.size() > largest.size() ||
                (digits.size() == largest.size() && digits > largest))
                return "'" + text + "' is out of range (beyond ±" + largest + ")";
            return "";
        },
        "INT", "integer");
}

// Why a text is not a finite real number, or "" when it is one (1e999 is infinity, not a value).
inline std::string finite_number_error(const std::string& text) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
        return "'" + text + "' is not a finite number";
    return "";
}

// CLI11 check for a real-number option: a finite number (finite_number_error).
inline CLI::Validator finite_number() {
    return CLI::Validator([](std::string& text) { return finite_number_error(text); }, "REAL",
                          "finite");
}

// CLI11 check for a real number that has to be > 0 (finite first); 0 or less is refused
// with `why` rather than read as "the default".
inline CLI::Validator positive_number(const std::string& why) {
    return CLI::Validator(
        [why](std::string& text) -> std::string {
            if (std::string error = finite_number_error(text); !error.empty()) return error;
            return std::strtod(text.c_str(), nullptr) > 0 ? "" : "'" + text + "' is not > 0: " + why;
        },
        "REAL", "positive");
}

// Adds --max-text-bytes to `cmd`, bound to `limit`.
inline void add_text_limit(CLI::App* cmd, size_t& limit) {
    cmd->add_option("--max-text-bytes", limit, "Refuse a text longer than this many bytes")
        ->check(unsigned_number())
        ->capture_default_str();
}

}  // namespace rf::cli
