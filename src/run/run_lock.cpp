// Room — run: the run directory's lock (see run_lock.hpp).
#include "run/run_lock.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/lock_file.hpp"
#include "io/locked_directory.hpp"
#include "run/created_directories.hpp"

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
    // Through a directory we hold above it, if any (compare's runs inside its --out).
    const LocatedPath where = locate(dir);
    const int fd = ::openat(where.dir_fd, where.relative.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd);
        errno = error;
        return std::nullopt;
    }
    register_locked_directory(dir, fd);  // from now on every write under dir goes through fd
    return RunLock(fd, dir);
}

bool RunLock::record_holder() const {
    if (!is_lock_record(dir_))
        throw std::runtime_error("'" + lock_path(dir_) +
                                 "' exists and is not roformer's lock record (a pid); it would "
                                 "be overwritten — move it away or pick another --out");
    // Created here, or the record a killed roformer of this user left (io/lock_file.hpp): never
    // a hard link to someone's file (`cp -al` of a run shares its `lock` with the original).
    int fd = ::openat(fd_, kFileName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    const bool created = fd >= 0;
    if (fd < 0 && errno == EEXIST) {
        fd = ::openat(fd_, kFileName, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st {};
        const std::string foreign = fd < 0 ? "" : ::fstat(fd, &st) != 0 ? "unreadable"
                                                                        : foreign_lock(st);
        if (!foreign.empty()) {
            ::close(fd);
            throw std::runtime_error("'" + lock_path(dir_) + "' exists and is not roformer's "
                                     "lock record (it is " + foreign + "); it would be "
                                     "overwritten — move it away");
        }
    }
    if (fd < 0) {
        const int error = errno;
        throw std::runtime_error("cannot write '" + lock_path(dir_) + "' (" + std::strerror(error) +
                                 "); " + lock_open_fix(error, fd_, lock_path(dir_)));
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    const bool ok =
        ::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) == ssize_t(pid.size());
    const int error = errno;
    ::close(fd);
    // A record that could not be written (a full disk, ulimit -f) is not left behind: a stray
    // empty `lock` would make every rerun's directory "not empty".
    if (!ok) ::unlinkat(fd_, kFileName, 0);
    if (!ok)
        throw std::runtime_error("cannot write '" + lock_path(dir_) + "' (" + std::strerror(error) +
                                 "); check free space");
    return created;
}

void RunLock::remove_record() const {
    if (holds_record()) ::unlinkat(fd_, kFileName, 0);
}

std::string RunLock::holder(const std::string& dir) {
    const std::optional<std::string> text = read_record(dir);
    if (!text) return "?";
    const std::string pid = text->substr(0, text->find('\n'));
    return pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos ? "?" : pid;
}

RunLock RunLock::acquire(const std::string& dir, bool record_pid) {
    require_in_place(dir);  // a directory inside one we hold (compare's runs): still ours?
    std::error_code ec;
    const LocatedPath where = locate(dir);
    std::string created_top;  // the outermost directory missing now, which this call makes
    if (where.dir_fd == AT_FDCWD) {
        created_top = outermost_missing(dir);
        fs::create_directories(dir, ec);
    } else {  // created inside the directory we hold, wherever it is now
        fs::path made;
        for (const fs::path& part : fs::path(where.relative)) {
            made /= part;
            if (::mkdirat(where.dir_fd, made.c_str(), 0755) != 0 && errno != EEXIST)
                ec = std::error_code(errno, std::generic_category());
        }
    }
    if (ec) remove_created_directories(dir, created_top);  // those made before the failure
    if (ec)
        throw std::runtime_error("cannot create run directory '" + dir + "' (" + ec.message() +
                                 "); pick another --out");
    if (std::optional<RunLock> lock = try_acquire(dir)) {
        lock->created_top_ = created_top;
        require_in_place(dir);  // renamed between the creation and the lock: not ours to write
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

bool RunLock::holds_record() const {
    struct stat st {};
    if (fd_ < 0 || ::fstatat(fd_, kFileName, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return false;
    const int fd = ::openat(fd_, kFileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    char text[33] = {};
    const ssize_t n = ::read(fd, text, 32);
    ::close(fd);
    return n > 0 && std::string(text, size_t(n)) == std::to_string(::getpid()) + "\n";
}

bool RunLock::in_place() const {
    struct stat held {}, named {};
    return fd_ >= 0 && ::fstat(fd_, &held) == 0 && ::stat(dir_.c_str(), &named) == 0 &&
           held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

void RunLock::remove_created() const {
    if (created_top_.empty() || !in_place()) return;
    remove_created_directories(dir_, created_top_);
}

void RunLock::forget_in_child() {
    if (fd_ < 0) return;
    // The child still resolves paths under the directory through a descriptor of it — a new
    // open of "." (a new open file description, which holds no flock) — so a rename of the
    // directory cannot send the child's writes elsewhere; the lock stays the parent's alone.
    const int unlocked = ::openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    unregister_locked_directory(fd_);
    ::close(fd_);  // the parent's descriptor still holds the flock
    fd_ = -1;
    if (unlocked >= 0) register_locked_directory(dir_, unlocked);  // open for the child's life
}

RunLock::~RunLock() {
    if (fd_ >= 0) unregister_locked_directory(fd_);
    if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace rf
