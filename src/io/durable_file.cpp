// io — durable and atomic file writes (see durable_file.hpp).
#include "io/durable_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include "io/read_file.hpp"

namespace rf {

namespace fs = std::filesystem;

void write_file_durably(const std::string& path, const std::string& bytes) {
    std::error_code ec;
    if (fs::is_directory(path, ec))
        throw std::runtime_error("cannot write '" + path + "': it is a directory");
    int error = 0;  // the first failure's errno
    auto fail = [&](const std::string& what) {
        const std::string fix = error == EFBIG    ? "raise the file-size limit (ulimit -f)"
                                : error == ENOSPC ? "free some disk space"
                                                  : "check free space and permissions";
        throw std::runtime_error("cannot write '" + path + "': " + what + " (" +
                                 std::strerror(error) + "); " + fix);
    };
    auto note = [&](bool ok) {
        if (!ok && error == 0) error = errno;
        return ok;
    };
    // O_NOFOLLOW: a symlink planted under the name must not redirect the write elsewhere.
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (!note(fd >= 0)) fail("cannot create it");
    bool written = true;
    for (size_t done = 0; written && done < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        written = note(n > 0);
        if (n == 0 && error == 0) error = ENOSPC;  // no progress: the device is full
        if (n > 0) done += size_t(n);
    }
    const bool flushed = written && note(::fsync(fd) == 0);
    const bool closed = note(::close(fd) == 0);
    if (!written || !flushed || !closed) fail("writing failed");
}

std::string temporary_name(const std::string& path) {
    return path + ".tmp-" + std::to_string(::getpid());
}

void fsync_directory(const std::string& dir) {
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

void rename_durably(const std::string& from, const std::string& to) {
    if (std::rename(from.c_str(), to.c_str()) != 0)
        throw std::runtime_error("renaming '" + from + "' to '" + to + "' failed (" +
                                 std::strerror(errno) + "); check permissions");
    fsync_directory(fs::path(to).parent_path().string());
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
    const std::string temp = temporary_name(path);
    try {
        write_file_durably(temp, bytes);
        rename_durably(temp, path);
    } catch (...) {
        std::remove(temp.c_str());
        throw;
    }
}

std::string read_file_bytes(const std::string& path, uint64_t max_bytes) {
    return read_regular_file(path, "file", "is it the right file?", max_bytes);
}

}  // namespace rf
