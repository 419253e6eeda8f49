// Test helpers shared by the tests of one-line errors (tests/machinery/test_config.cpp,
// test_nonfinite.cpp): the message an action throws, and a substring test on it.
#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <string>

namespace rf::testing {

// Runs `action`, which must throw; returns the message (a failed check when it does not throw).
template <class F>
std::string error_of(F&& action) {
    try {
        action();
    } catch (const std::exception& e) { return e.what(); }
    FAIL("expected an exception");
    return "";
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace rf::testing
