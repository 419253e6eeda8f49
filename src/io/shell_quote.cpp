// Room — io: POSIX shell quoting (see shell_quote.hpp).
#include "io/shell_quote.hpp"

namespace rf {

std::string shell_quote(const std::string& text) {
    static const char kSafe[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-./:=@_,%";
    if (!text.empty() && text.find_first_not_of(kSafe) == std::string::npos) return text;
    std::string out = "'";
    for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::string shell_command(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
    return out;
}

}  // namespace rf
