// Room — config: the free-text keys of a Config (data.path) must be valid UTF-8 — the
// run's config.toml and corpus.json are UTF-8 documents, and a name that cannot be written
// into them would leave a run that cannot be resumed. Part of validate() (issue 23).
#pragma once

#include <string>

#include "config/config.hpp"

namespace rf {

// True when `text` is well-formed UTF-8 (no stray continuation byte, no overlong form, no
// surrogate, nothing above U+10FFFF).
bool is_valid_utf8(const std::string& text);

// Throws std::invalid_argument naming the key when a free-text key is not valid UTF-8.
void validate_text(const Config& config);

}  // namespace rf
