// io — named output files, written as transactions (see output_file.hpp).
#include "io/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/durable_file.hpp"

namespace rf {

namespace {

std::string parent_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// The first `n` bytes of a regular file (fewer if it is shorter), not following a symlink.
std::string first_bytes(const std::string& path, size_t n) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return "";
    std::string head(n, '\0');
    const ssize_t got = ::read(fd, head.data(), n);
    ::close(fd);
    head.resize(got > 0 ? size_t(got) : 0);
    return head;
}

}  // namespace

void check_output_file(const std::string& path, const OutputRule& rule) {
    auto refuse = [&](const std::string& problem, const std::string& fix) {
        throw std::runtime_error("cannot write " + rule.what + " '" + path + "': " + problem +
                                 "; " + fix);
    };
    if (path.empty()) refuse("the name is empty", "give a file name");
    struct stat dir {};
    const std::string parent = parent_of(path);
    if (::stat(parent.c_str(), &dir) != 0)
        refuse("its directory '" + parent + "' does not exist",
               "create it first or pick another path");
    if (!S_ISDIR(dir.st_mode)) refuse("'" + parent + "' is not a directory", "pick another path");
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return;  // a new file: always fine
        refuse(std::strerror(errno), "check the path and its permissions");
    }
    if (S_ISDIR(st.st_mode)) refuse("it is a directory", "name a file inside it");
    if (S_ISLNK(st.st_mode))
        refuse("it is a symbolic link (it would be replaced, not its target)", rule.fix);
    if (!S_ISREG(st.st_mode))
        refuse("it is not a regular file (a FIFO, socket or device)", "name a regular file");
    size_t longest = rule.markers.empty() ? 0 : 1024;
    for (const std::string& s : rule.ours) longest = std::max(longest, s.size());
    const std::string head = first_bytes(path, longest);
    for (const std::string& s : rule.ours)
        if (!s.empty() && head.compare(0, s.size(), s) == 0) return;
    for (const std::string& m : rule.markers)
        if (!m.empty() && head.find(m) != std::string::npos) return;
    if (rule.ours.empty() && rule.markers.empty())  // a kind of file never replaced at all
        refuse("a file of that name exists, and " + rule.what + " never replaces one", rule.fix);
    refuse("a file of that name exists and was not written by roformer (it would be replaced)",
           rule.fix);
}

void write_output_file(const std::string& path, const std::string& bytes, const OutputRule& rule) {
    check_output_file(path, rule);
    write_file_atomically(path, bytes);
}

void install_output_file(const std::string& produced, const std::string& path,
                         const OutputRule& rule) {
    try {
        check_output_file(path, rule);
        const int fd = ::open(produced.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        const bool synced = fd >= 0 && ::fsync(fd) == 0;
        if (fd >= 0) ::close(fd);
        if (!synced)
            throw std::runtime_error("cannot write " + rule.what + " '" + path + "': '" + produced +
                                     "' could not be read back (" + std::strerror(errno) +
                                     "); check free space");
        rename_durably(produced, path);
    } catch (...) {
        std::remove(produced.c_str());
        throw;
    }
}

}  // namespace rf
