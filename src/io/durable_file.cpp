// Room — io: durable and atomic file writes (see durable_file.hpp).
#include "io/durable_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/locked_directory.hpp"
#include "io/read_file.hpp"

namespace rf {

namespace fs = std::filesystem;

void write_file_durably(const std::string& path, const std::string& bytes) {
    const LocatedPath where = locate(path);
    struct stat st {};
    if (::fstatat(where.dir_fd, where.relative.c_str(), &st, 0) == 0 && S_ISDIR(st.st_mode))
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
    note_written(where);  // before the open: a file cut short is ours to remove too
    const int fd = ::openat(where.dir_fd, where.relative.c_str(),
                            O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
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
    // The directory itself may be a locked one: locate its (dummy) child to find its descriptor.
    const LocatedPath child = locate((fs::path(dir.empty() ? "." : dir) / "x").string());
    const std::string parent = fs::path(child.relative).parent_path().string();
    const int fd = ::openat(child.dir_fd, parent.empty() ? "." : parent.c_str(),
                            O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

void rename_durably(const std::string& from, const std::string& to) {
    const LocatedPath source = locate(from), target = locate(to);
    note_written(target);
    if (::renameat(source.dir_fd, source.relative.c_str(), target.dir_fd,
                   target.relative.c_str()) != 0)
        throw std::runtime_error("renaming '" + from + "' to '" + to + "' failed (" +
                                 std::strerror(errno) + "); check permissions");
    fsync_directory(fs::path(to).parent_path().string());
}

void remove_file_quietly(const std::string& path) {
    const LocatedPath where = locate(path);
    ::unlinkat(where.dir_fd, where.relative.c_str(), 0);
}

int open_for_append(const std::string& path) {
    const LocatedPath where = locate(path);
    note_written(where);
    return ::openat(where.dir_fd, where.relative.c_str(),
                    O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
}

TemporaryFile::TemporaryFile(const std::string& target)
    : target_(target), path_(temporary_name(target)) {}

TemporaryFile::TemporaryFile(TemporaryFile&& other) noexcept
    : target_(std::move(other.target_)), path_(std::move(other.path_)), kept_(other.kept_) {
    other.kept_ = true;  // the moved-from guard owns nothing
}

TemporaryFile::~TemporaryFile() {
    if (!kept_) remove_file_quietly(path_);
}

void TemporaryFile::rename_into_place() {
    rename_durably(path_, target_);
    keep();
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
    TemporaryFile temp(path);
    temp.write(bytes);
    temp.rename_into_place();
    require_in_place(path);  // written into the locked directory, wherever it is now
}

std::string read_file_bytes(const std::string& path, uint64_t max_bytes) {
    return read_regular_file(path, "file", "is it the right file?", max_bytes);
}

}  // namespace rf
