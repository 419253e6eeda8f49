// libFuzzer target: the safetensors reader (io/safetensors.hpp) on arbitrary bytes. Any input
// must either parse or throw std::runtime_error — no crash, no sanitizer report, no hang; a
// file that parses must encode and parse back to the same tensors.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    rf::SafetensorsFile file;
    try {
        file = rf::parse_safetensors(bytes, "fuzz.safetensors");
    } catch (const std::runtime_error&) {
        return 0;  // refused with a message: fine
    }
    std::string again;
    try {
        again = rf::encode_safetensors("fuzz.safetensors", file.tensors, file.metadata);
    } catch (const std::invalid_argument&) {
        return 0;  // e.g. metadata that is not UTF-8 cannot be written back
    }
    const rf::SafetensorsFile back = rf::parse_safetensors(again, "again.safetensors");
    if (back.tensors.size() != file.tensors.size()) __builtin_trap();
    return 0;
}
