// Room — config: a string as a TOML basic string (quotes, escapes), for to_toml().
#pragma once

#include <string>

namespace rf {

// "text" with \" \\ \n \t and \uXXXX for other control characters escaped.
std::string quote_toml(const std::string& s);

}  // namespace rf
