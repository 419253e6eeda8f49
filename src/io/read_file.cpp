// Room — io: reading a named file (see read_file.hpp).
#include "io/read_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <sys/stat.h>

#ifndef S_ISSOCK  // Windows: no file is a socket
#define S_ISSOCK(mode) false
#endif

namespace rf {

uint64_t require_regular_file(const std::string& path, const std::string& what,
                              const std::string& fix) {
    const std::string name = what + " '" + path + "'";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw std::runtime_error(name + " not found or not readable (" + std::strerror(errno) +
                                 "); " + fix);
    if (S_ISDIR(st.st_mode))
        throw std::runtime_error(name + " is a directory; give a file (" + fix + ")");
    if (!S_ISREG(st.st_mode))
        throw std::runtime_error(name + " is not a regular file (" +
                                 (S_ISFIFO(st.st_mode)   ? "a FIFO"
                                  : S_ISSOCK(st.st_mode) ? "a socket"
                                                         : "a device") +
                                 "); " + fix);
    return static_cast<uint64_t>(st.st_size);
}

void require_directory(const std::string& path, const std::string& what, const std::string& fix) {
    const std::string name = what + " '" + path + "'";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw std::runtime_error(name + (errno == ENOENT ? std::string(" does not exist")
                                                         : std::string(" is not readable (") +
                                                               std::strerror(errno) + ")") +
                                 "; " + fix);
    if (!S_ISDIR(st.st_mode))
        throw std::runtime_error(name + " is a file, not a directory; " + fix);
}

std::string read_regular_file(const std::string& path, const std::string& what,
                              const std::string& fix, uint64_t max_bytes) {
    const uint64_t size = require_regular_file(path, what, fix);
    if (size > max_bytes)
        throw std::runtime_error(what + " '" + path + "' has " + std::to_string(size) +
                                 " bytes, over the limit of " + std::to_string(max_bytes) +
                                 "; " + fix);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(what + " '" + path + "' is not readable; check its permissions");
    std::string bytes(static_cast<size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    bytes.resize(static_cast<size_t>(in.gcount()));  // a file that shrank meanwhile
    if (in.bad()) throw std::runtime_error("reading " + what + " '" + path + "' failed; check the disk");
    return bytes;
}

}  // namespace rf
