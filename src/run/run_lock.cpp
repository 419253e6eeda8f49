// Run — the run directory's lock (see run_lock.hpp).
#include "run/run_lock.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rf {

namespace fs = std::filesystem;

namespace {

std::string lock_path(const std::string& dir) {
    return (fs::path(dir) / RunLock::kFileName).string();
}

// Up to 32 bytes of dir/lock, read without following a symlink; nullopt when it is not a
// regular file (or cannot be read), "" when it does not exist.
std::optional<std::string> read_record(const std::string& dir) {
    struct stat st {};
    if (::lstat(lock_path(dir).c_str(), &st) != 0)
        return errno == ENOENT ? "" : std::optional<std::string>();
    if (!S_ISREG(st.st_mode) || st.st_size > 32) return std::nullopt;
    const int fd = ::open(lock_path(dir).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char text[33] = {};
    const ssize_t n = ::read(fd, text, 32);
    ::close(fd);
    if (n < 0) return std::nullopt;
    return std::string(text, size_t(n));
}

}  // namespace

bool RunLock::is_lock_record(const std::string& dir) {
    const std::optional<std::string> text = read_record(dir);
    return text && text->find_first_not_of("0123456789\n") == std::string::npos;
}

std::optional<RunLock> RunLock::try_acquire(const std::string& dir) {
    // O_CLOEXEC: a program we exec must not inherit (and outlive us holding) the lock.
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd);
        errno = error;
        return std::nullopt;
    }
    return RunLock(fd, dir);
}

void RunLock::record_holder() const {
    if (!is_lock_record(dir_))
        throw std::runtime_error("'" + lock_path(dir_) +
                                 "' exists and is not roformer's lock record (a pid); it would "
                                 "be overwritten — move it away or pick another --out");
    const int fd =
        ::open(lock_path(dir_).c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot write '" + lock_path(dir_) + "' (" + std::strerror(errno) +
                                 "); check the directory's permissions");
    const std::string pid = std::to_string(::getpid()) + "\n";
    const bool ok =
        ::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) == ssize_t(pid.size());
    const int error = errno;
    ::close(fd);
    if (!ok)
        throw std::runtime_error("cannot write '" + lock_path(dir_) + "' (" + std::strerror(error) +
                                 "); check free space");
}

std::string RunLock::holder(const std::string& dir) {
    const std::optional<std::string> text = read_record(dir);
    if (!text) return "?";
    const std::string pid = text->substr(0, text->find('\n'));
    return pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos ? "?" : pid;
}

RunLock RunLock::acquire(const std::string& dir, bool record_pid) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw std::runtime_error("cannot create run directory '" + dir + "' (" + ec.message() +
                                 "); pick another --out");
    if (std::optional<RunLock> lock = try_acquire(dir)) {
        if (record_pid) lock->record_holder();
        return std::move(*lock);
    }
    if (errno != EWOULDBLOCK)
        throw std::runtime_error("cannot lock run directory '" + dir + "' (" +
                                 std::strerror(errno) + "); check its permissions");
    // The holder writes its pid just after locking; give it a moment if we raced it.
    std::string pid = holder(dir);
    for (int i = 0; i < 20 && pid == "?"; ++i, pid = holder(dir)) ::usleep(10000);
    throw std::runtime_error("run directory " + dir + " is in use by pid " + pid +
                             "; wait for it to finish or pick another --out");
}

void RunLock::forget_in_child() {
    if (fd_ >= 0) ::close(fd_);  // the parent's descriptor still holds the flock
    fd_ = -1;
}

RunLock::~RunLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace rf
