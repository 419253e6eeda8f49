// libFuzzer target: a config file (config/config.hpp, apply_toml_text + validate) on arbitrary
// text. Any input must be applied or refused with std::invalid_argument / std::runtime_error;
// a config that validates must write and read back to an equal config.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    rf::Config config;
    try {
        rf::apply_toml_text(config, text, "fuzz.toml", {"compare"});
        rf::validate(config);
    } catch (const std::invalid_argument&) { return 0; } catch (const std::runtime_error&) {
        return 0;
    }
    rf::Config again;
    rf::apply_toml_text(again, rf::to_toml(config), "again.toml");
    if (again != config) __builtin_trap();
    return 0;
}
