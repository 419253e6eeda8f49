// Room — io: the registry of locked directories (see locked_directory.hpp).
#include "io/locked_directory.hpp"
#include "io/platform.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rf {

namespace fs = std::filesystem;

namespace {

struct LockedDirectory {
    int fd;
    std::string shown;            // the name as the command was given it
    std::set<std::string> names;  // files this process wrote directly inside it
};

std::mutex registry_mutex;
std::map<std::string, LockedDirectory>& registry() {  // absolute, normal path → directory
    static std::map<std::string, LockedDirectory> directories;
    return directories;
}

std::string key_of(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::absolute(fs::path(path), ec).lexically_normal();
    std::string key = p.string();
    while (key.size() > 1 && key.back() == '/') key.pop_back();
    return key;
}

// Where the locked directory `fd` is now, as the kernel names it.
std::string current_place(int fd) { return platform::descriptor_place(fd); }

}  // namespace

void register_locked_directory(const std::string& dir, int fd) {
    const std::lock_guard<std::mutex> hold(registry_mutex);
    registry()[key_of(dir)] = LockedDirectory{fd, dir, {}};
}

void unregister_locked_directory(int fd) {
    const std::lock_guard<std::mutex> hold(registry_mutex);
    for (auto it = registry().begin(); it != registry().end(); ++it)
        if (it->second.fd == fd) {
            registry().erase(it);
            return;
        }
}

LocatedPath locate(const std::string& path) {
    const std::lock_guard<std::mutex> hold(registry_mutex);
    if (registry().empty() || path.empty()) return {AT_FDCWD, path};
    const fs::path target(key_of(path));
    for (fs::path dir = target.parent_path(); !dir.empty(); dir = dir.parent_path()) {
        const auto it = registry().find(dir.string());
        if (it != registry().end()) return {it->second.fd, target.lexically_relative(dir).string()};
        if (dir == dir.parent_path()) break;  // the root
    }
    return {AT_FDCWD, path};
}

void require_in_place(const std::string& path) {
    const std::lock_guard<std::mutex> hold(registry_mutex);
    const std::string target = key_of(path);
    for (const auto& [key, locked] : registry()) {
        const bool above = target == key || target.rfind(key + "/", 0) == 0;
        if (!above) continue;
        struct stat held {}, named {};
        if (::fstat(locked.fd, &held) != 0) continue;
        if (::stat(locked.shown.c_str(), &named) == 0 && named.st_dev == held.st_dev &&
            named.st_ino == held.st_ino)
            continue;
        std::string now = current_place(locked.fd);
        const std::string deleted = " (deleted)";
        const bool gone = now.empty() || held.st_nlink == 0 ||
                          (now.size() > deleted.size() &&
                           now.compare(now.size() - deleted.size(), deleted.size(), deleted) == 0);
        throw std::runtime_error(
            "directory '" + locked.shown + "' was " + (gone ? "deleted" : "moved or replaced") +
            " while this run wrote into it; " +
            (gone ? std::string("its files are gone")
                  : "its files are now at '" + now + "'") +
            " and nothing was written into what is named '" + locked.shown + "' now; " +
            (gone ? "start again with a new --out" : "continue the run from its new place"));
    }
}

void note_written(const LocatedPath& where) {
    if (where.dir_fd == AT_FDCWD || where.relative.find('/') != std::string::npos) return;
    const std::lock_guard<std::mutex> hold(registry_mutex);
    for (auto& [key, locked] : registry())
        if (locked.fd == where.dir_fd) locked.names.insert(where.relative);
}

std::vector<std::string> names_written_in(int fd) {
    const std::lock_guard<std::mutex> hold(registry_mutex);
    for (const auto& [key, locked] : registry())
        if (locked.fd == fd) return {locked.names.begin(), locked.names.end()};
    return {};
}

}  // namespace rf
