// Room — io: the lock of a named output file (see output_lock.hpp).
#include "io/output_lock.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/durable_file.hpp"
#include "io/lock_file.hpp"
#include "io/locked_directory.hpp"

namespace rf::output_lock {

// ---- step 2: the lock ------------------------------------------------------------------------
constexpr const char* kLockSuffix = ".lock";


// ---- a stop signal during the work ----------------------------------------------------------
// A command without stop handling of its own (rope-precision, graph, attention …) dies of
// Ctrl-C, SIGTERM, SIGHUP or SIGPIPE at once. Its lock files are removed first, by a handler
// installed only where the signal would kill anyway (SIG_DFL): async-signal-safe calls over a
// fixed table, then the signal again with its default action (so the exit status is the same).
// A command with an InterruptGuard (run/interrupt.hpp) replaces it and unwinds instead, and
// HeldLocks lets go as the process exits.
struct SignalEntry {
    volatile std::sig_atomic_t used = 0;
    int fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    char path[PATH_MAX] = {};
};
SignalEntry g_entries[16];
volatile std::sig_atomic_t g_publishing = 0;  // between the two renames: the journal stays
pid_t g_owner = 0;                            // a forked child leaves its parent's locks alone

extern "C" void remove_locks_and_die(int sig) {
    if (::getpid() == g_owner && !g_publishing)
        for (SignalEntry& e : g_entries) {
            struct stat named {};
            if (e.used && ::lstat(e.path, &named) == 0 && named.st_dev == e.dev &&
                named.st_ino == e.ino)
                ::unlink(e.path);
        }
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

// The lock `fd` (a file named `lock`, outside any directory this process holds) is removed
// should a stop signal end the process while it waits for the write.
void remove_on_signal(int fd, const std::string& lock) {
    static bool installed = false;
    if (!installed) {
        installed = true;
        g_owner = ::getpid();
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
            struct sigaction old {};
            if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
                old.sa_handler != SIG_DFL)
                continue;  // ignored (a background job's SIGINT) or handled by someone else
            struct sigaction sa {};
            sa.sa_handler = remove_locks_and_die;
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = SA_RESETHAND;
            ::sigaction(sig, &sa, nullptr);
        }
    }
    struct stat st {};
    if (lock.size() >= PATH_MAX || ::fstat(fd, &st) != 0) return;
    for (SignalEntry& e : g_entries)
        if (!e.used) {
            e.fd = fd;
            e.dev = st.st_dev;
            e.ino = st.st_ino;
            std::memcpy(e.path, lock.c_str(), lock.size() + 1);
            e.used = 1;
            return;
        }
}

void forget_on_signal(int fd) {
    for (SignalEntry& e : g_entries)
        if (e.used && e.fd == fd) e.used = 0;
}

// Lets go of a lock: removes its file (unless it is a publication's journal, or no longer the
// file we locked), then closes it, which drops the flock. `located`: resolve the name through
// a directory this process holds (false at exit, when that registry may be gone).
void let_go(const HeldLock& held, bool located) {
    forget_on_signal(held.fd);
    const LocatedPath where = located ? locate(held.lock) : LocatedPath{AT_FDCWD, held.lock};
    struct stat mine {}, named {};
    if (!held.publishing && ::fstat(held.fd, &mine) == 0 &&
        ::fstatat(where.dir_fd, where.relative.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        mine.st_dev == named.st_dev && mine.st_ino == named.st_ino)
        ::unlinkat(where.dir_fd, where.relative.c_str(), 0);
    ::close(held.fd);
}

// The output files this process holds locked, by absolute path. A command that fails between
// check_output_file and the write lets go of them as it exits; a forked child never does (the
// locks are its parent's).
struct HeldLocks {
    const pid_t owner = ::getpid();
    std::map<std::string, HeldLock> files;
    ~HeldLocks() {
        if (::getpid() != owner) return;
        for (const auto& [key, held] : files) let_go(held, false);
    }
};
std::mutex held_mutex;
HeldLocks& held_locks() {
    static HeldLocks locks;
    return locks;
}

std::string key_of(const std::string& path) {
    std::error_code ec;
    return std::filesystem::absolute(path, ec).lexically_normal().string();
}

// What a lock file says: its holder's pid ("" while a new holder has not written it yet) and,
// after a publication stopped between its two renames, the hash that was being published.
struct LockRecord {
    std::string pid, publishing;
};

std::optional<LockRecord> read_lock_record(int fd) {
    char text[160] = {};
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    if (n < 0) return std::nullopt;
    const std::string all(text, size_t(n));
    LockRecord record;
    const size_t end = all.find('\n');
    record.pid = all.substr(0, end);
    if (record.pid.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    if (end == std::string::npos || end + 1 == all.size())
        return end == std::string::npos && !all.empty() ? std::nullopt : std::optional(record);
    const std::string rest = all.substr(end + 1);
    const std::string word = "publishing ";
    if (rest.size() != word.size() + 65 || rest.compare(0, word.size(), word) != 0 ||
        rest.back() != '\n')
        return std::nullopt;
    record.publishing = rest.substr(word.size(), 64);
    if (record.publishing.find_first_not_of("0123456789abcdef") != std::string::npos)
        return std::nullopt;
    return record;
}

// Replaces the lock file's content (our pid, and the journal line while publishing).
bool write_lock_record(int fd, const std::string& text) {
    return ::ftruncate(fd, 0) == 0 &&
           ::pwrite(fd, text.data(), text.size(), 0) == ssize_t(text.size()) && ::fsync(fd) == 0;
}

[[noreturn]] void refuse_output(const std::string& path, const OutputRule& rule,
                                const std::string& problem, const std::string& fix) {
    throw std::runtime_error("cannot write " + rule.what + " '" + path + "': " + problem + "; " +
                             fix);
}

void release(const std::string& path) {
    const std::lock_guard<std::mutex> hold(held_mutex);
    const auto it = held_locks().files.find(key_of(path));
    if (it == held_locks().files.end()) return;
    let_go(it->second, true);
    held_locks().files.erase(it);
}

HeldLock* held_lock(const std::string& path) {
    const auto it = held_locks().files.find(key_of(path));
    return it == held_locks().files.end() ? nullptr : &it->second;
}

// Takes the lock of `path` unless this process holds it already; returns whether it took it.
bool take_lock(const std::string& path, const OutputRule& rule) {
    const std::lock_guard<std::mutex> hold(held_mutex);
    if (held_lock(path)) return false;
    const std::string lock = path + kLockSuffix;
    auto refuse = [&](const std::string& problem, const std::string& fix) {
        refuse_output(path, rule, problem, fix);
    };
    for (int attempt = 0; attempt < 100; ++attempt) {
        const LocatedPath where = locate(lock);
        const char* name = where.relative.c_str();
        int fd =
            ::openat(where.dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        const bool created = fd >= 0;
        if (fd < 0 && errno == EEXIST)
            fd = ::openat(where.dir_fd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) continue;  // its holder removed it between the two opens
        if (fd < 0 && errno == ELOOP)
            refuse("'" + lock + "' is a symbolic link, not roformer's lock", "move it away");
        if (fd < 0) {
            const int error = errno;
            refuse("cannot create its lock '" + lock + "' (" + std::strerror(error) + ")",
                   lock_open_fix(error, where.dir_fd, lock));
        }
        // Only a file we created, or one a killed roformer of this user left (io/lock_file.hpp):
        // a hard link to a user's file would get our journal and be removed.
        struct stat st {};
        const std::string foreign =
            ::fstat(fd, &st) != 0 ? "unreadable" : created ? "" : foreign_lock(st);
        if (!foreign.empty()) {
            ::close(fd);
            refuse("'" + lock + "' exists and is not roformer's lock (it is " + foreign + ")",
                   "move it away");
        }
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int error = errno;
            // The holder writes its pid just after locking; give it a moment if we raced it.
            std::optional<LockRecord> record = read_lock_record(fd);
            for (int i = 0; i < 20 && record && record->pid.empty(); ++i) {
                ::usleep(10000);
                record = read_lock_record(fd);
            }
            ::close(fd);
            if (error != EWOULDBLOCK)
                refuse("cannot lock '" + lock + "' (" + std::strerror(error) + ")",
                       "check the directory's permissions");
            const std::string pid = record && !record->pid.empty() ? record->pid : "?";
            refuse("another roformer (pid " + pid + ") is writing it now",
                   "wait for it to finish, then run this again");
        }
        // Locked — but the holder before us removes the file as it lets go: the name must still
        // name the inode we locked, or we start again with the new one.
        struct stat named {};
        if (::fstatat(where.dir_fd, name, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
            named.st_dev != st.st_dev || named.st_ino != st.st_ino) {
            ::close(fd);
            continue;
        }
        const std::optional<LockRecord> record = read_lock_record(fd);
        if (!record) {  // a user's file of that name: neither written nor removed
            ::close(fd);
            refuse("'" + lock + "' exists and is not roformer's lock (a pid record)",
                   "move it away");
        }
        // Ours. The journal of a killed publication, if any, stays until it is finished.
        HeldLock& held = held_locks().files[key_of(path)];
        held = HeldLock{fd, lock, !record->publishing.empty()};
        try {
            if (held.publishing) finish_publication(path, record->publishing);
            held.publishing = false;
            if (!write_lock_record(fd, std::to_string(::getpid()) + "\n")) {
                const int error = errno;
                refuse("cannot write its lock '" + lock + "' (" + std::strerror(error) + ")",
                       error == EFBIG    ? "raise the file-size limit (ulimit -f)"
                       : error == ENOSPC ? "free some disk space"
                                         : "check free space and permissions");
            }
        } catch (...) {
            let_go(held, true);
            held_locks().files.erase(key_of(path));
            throw;
        }
        return true;
    }
    refuse_output(path, rule,
                  "its lock '" + lock + "' was replaced again and again as it was taken",
                  "run this again");
}

}  // namespace rf::output_lock
