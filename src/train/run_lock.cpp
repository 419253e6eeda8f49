// Stage 7 — train: the run directory's lock (see run_lock.hpp).
#include "train/run_lock.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace rf {

namespace fs = std::filesystem;

static std::string lock_path(const std::string& dir) {
    return (fs::path(dir) / RunLock::kFileName).string();
}

std::optional<RunLock> RunLock::try_acquire(const std::string& dir) {
    // O_CLOEXEC: a child we exec must not inherit (and outlive us holding) the lock.
    const int fd = ::open(lock_path(dir).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return std::nullopt;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return std::nullopt;
    }
    // Ours now: record who holds it, for the message the next writer gets.
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
    return RunLock(fd);
}

std::string RunLock::holder(const std::string& dir) {
    std::ifstream in(lock_path(dir));
    std::string pid;
    in >> pid;
    return pid.empty() ? "?" : pid;
}

RunLock RunLock::acquire(const std::string& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw std::runtime_error("cannot create run directory '" + dir + "' (" + ec.message() +
                                 "); pick another --out");
    if (std::optional<RunLock> lock = try_acquire(dir)) return std::move(*lock);
    if (errno != EWOULDBLOCK)
        throw std::runtime_error("cannot lock run directory '" + dir + "' (" +
                                 std::strerror(errno) + "); check its permissions");
    // The holder writes its pid just after locking; give it a moment if we raced it.
    std::string pid = holder(dir);
    for (int i = 0; i < 20 && pid == "?"; ++i, pid = holder(dir)) ::usleep(10000);
    throw std::runtime_error("run directory " + dir + " is in use by pid " + pid +
                             "; wait for it to finish or pick another --out");
}

RunLock::~RunLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace rf
