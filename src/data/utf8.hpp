// Room — data: UTF-8 decoding and encoding, written out (no locale, no <codecvt>).
//
// decode_utf8 never fails: every byte that does not start a valid, shortest-form sequence
// becomes U+FFFD (the replacement character), one per bad byte, and decoding resumes at the
// next byte. So any file, even binary, turns into a sequence of code points.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rf::data {

constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes the code point starting at text[pos]; returns it and sets `length` to the bytes
// consumed (1 for an invalid byte, which yields kReplacementChar).
char32_t decode_one_utf8(const std::string& text, size_t pos, size_t& length);

// All code points of `text` (invalid bytes → U+FFFD).
std::vector<char32_t> decode_utf8(const std::string& text);

// Appends the UTF-8 bytes of `code_point` (invalid code points are written as U+FFFD).
void append_utf8(std::string& out, char32_t code_point);

std::string encode_utf8(char32_t code_point);

// Number of bytes in `text` that are not part of a valid UTF-8 sequence.
size_t count_invalid_utf8_bytes(const std::string& text);

}  // namespace rf::data
