// Room — run: created directories and their removal (see created_directories.hpp).
#include "run/created_directories.hpp"

#include <filesystem>
#include <system_error>

#include <unistd.h>

namespace rf {

namespace fs = std::filesystem;

std::string outermost_missing(const std::string& dir) {
    std::error_code ec;
    std::string top;
    for (fs::path missing = fs::path(dir).lexically_normal();
         !missing.empty() && missing != missing.root_path() &&
         !fs::exists(fs::symlink_status(missing, ec));
         missing = missing.parent_path())
        if (!missing.filename().empty()) top = missing.string();
    return top;
}

void remove_created_directories(const std::string& dir, const std::string& top) {
    if (top.empty()) return;
    for (fs::path made = fs::path(dir).lexically_normal(); !made.empty();
         made = made.parent_path()) {
        if (made.filename().empty()) continue;  // "a/b/": the same directory as "a/b"
        if (::rmdir(made.c_str()) != 0 || made == top) return;
    }
}

}  // namespace rf
