// io — named output files, written as transactions (see output_file.hpp).
#include "io/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/durable_file.hpp"
#include "io/locked_directory.hpp"
#include "io/read_file.hpp"

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

std::string name_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The line of a "<path>.written-by" mark (scripts/script_outputs.py writes the same).
std::string mark_line(const std::string& owner, const std::string& path, const std::string& hex) {
    return owner + " wrote " + name_of(path) + "; sha256 " + hex + "\n";
}

// The owner and hash a mark names, or {"", ""} when `text` is not a mark.
std::pair<std::string, std::string> parse_mark(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const std::string prefix = "roformer-cpp ";
    const size_t wrote = text.find(" wrote ");
    const size_t hash = text.rfind("; sha256 ");
    if (text.compare(0, prefix.size(), prefix) != 0 || wrote == std::string::npos ||
        hash == std::string::npos || hash < wrote || text.size() != hash + 9 + 64 ||
        text.find('\n') != std::string::npos)
        return {"", ""};
    const std::string hex = text.substr(hash + 9);
    if (hex.find_first_not_of("0123456789abcdef") != std::string::npos) return {"", ""};
    const std::string owner = text.substr(0, wrote);
    if (owner.find(' ', prefix.size()) != std::string::npos) return {"", ""};
    return {owner, hex};
}

// ---- step 2: the lock ------------------------------------------------------------------------
constexpr const char* kLockSuffix = ".lock";

// A lock this process holds: "<path>.lock", open and flock'ed.
struct HeldLock {
    int fd = -1;
    std::string lock;
    bool publishing = false;  // between the two renames: the lock file is the journal, kept
};

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

// A publication a killed writer stopped between its two renames: the file already holds the
// bytes the journal names, the mark does not yet. Finished here, under the lock.
void finish_publication(const std::string& path, const std::string& hex) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    if (sha256_hex(read_file_bytes(path)) != hex) return;  // stopped before the file's rename
    write_file_atomically(written_by_name(path), mark_line(kOutputOwner, path, hex));
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
        if (fd < 0 && errno == EEXIST)
            fd = ::openat(where.dir_fd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) continue;  // its holder removed it between the two opens
        if (fd < 0 && errno == ELOOP)
            refuse("'" + lock + "' is a symbolic link, not roformer's lock", "move it away");
        if (fd < 0) {
            const int error = errno;
            refuse("cannot create its lock '" + lock + "' (" + std::strerror(error) + ")",
                   error == ENOSPC ? "free some disk space" : "check the directory's permissions");
        }
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            refuse("'" + lock + "' exists and is not roformer's lock (not a regular file)",
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

void check_held(const std::string& path, const OutputRule& rule);

// Step 1's checks and the parent directory, before the lock (whose file goes beside `path`).
void check_before_lock(const std::string& path, const OutputRule& rule) {
    auto refuse = [&](const std::string& problem, const std::string& fix) {
        refuse_output(path, rule, problem, fix);
    };
    if (path.empty()) refuse("the name is empty", "give a file name");
    if (path.back() == '/' || name_of(path) == "." || name_of(path) == "..")
        refuse("it names a directory", "name a file inside it");
    check_output_names(path, rule.what,
                       {"NAME.lock", "NAME.written-by.tmp-<pid>", "NAME.tmp-<pid>.png"});
    struct stat dir {};
    const std::string parent = parent_of(path);
    if (::stat(parent.c_str(), &dir) != 0)
        refuse("its directory '" + parent + "' does not exist",
               "create it first or pick another path");
    if (!S_ISDIR(dir.st_mode)) refuse("'" + parent + "' is not a directory", "pick another path");
    // A directory, a symlink, a device under the name: refused before a lock file is made
    // beside it (/dev/null.lock).
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) check_held(path, rule);
}

// Under the lock: what is at `path` now is ours to replace (or nothing is there).
void check_held(const std::string& path, const OutputRule& rule) {
    auto refuse = [&](const std::string& problem, const std::string& fix) {
        refuse_output(path, rule, problem, fix);
    };
    // The mark's name: absent, or a mark of ours (a stale one, its file since removed) —
    // never a user's file that write_output_file would replace.
    const std::string mark = written_by_name(path);
    struct stat mark_st {};
    const bool has_mark = ::lstat(mark.c_str(), &mark_st) == 0;
    const auto [owner, hex] = has_mark && S_ISREG(mark_st.st_mode)
                                  ? parse_mark(first_bytes(mark, 4096))
                                  : std::pair<std::string, std::string>{};
    if (has_mark && owner != kOutputOwner)
        refuse("'" + mark + "' exists and is not a mark roformer wrote", "move it away");
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
    // Ours by the plot script's mark inside the picture …
    const std::string head = rule.markers.empty() ? "" : first_bytes(path, 1024);
    for (const std::string& m : rule.markers)
        if (!m.empty() && head.find(m) != std::string::npos) return;
    // … or by the .written-by mark beside it, while the bytes are still the ones we wrote.
    if (!has_mark)
        refuse("a file of that name exists and nothing shows that roformer wrote it (no '" + mark +
                   "' beside it; a file's format is not its origin)",
               rule.fix);
    if (sha256_hex(read_regular_file(path, rule.what, rule.fix, kMaxReadBytes)) != hex)
        refuse("it was changed after roformer wrote it (its SHA-256 is not the one in '" + mark +
                   "')",
               rule.fix);
}

// The whole of a file this process just wrote, read through a directory it holds (if any).
std::string read_back(const std::string& path) {
    const LocatedPath where = locate(path);
    const int fd =
        ::openat(where.dir_fd, where.relative.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    std::string bytes;
    char buffer[1 << 16];
    for (ssize_t n = 0; fd >= 0 && (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        bytes.append(buffer, size_t(n));
    }
    if (fd >= 0) ::close(fd);
    return bytes;
}

// Steps 3 to 5, under the lock.
void publish(const std::string& path, const std::string& bytes) {
    const std::string hex = sha256_hex(bytes);
    TemporaryFile file(path);
    file.write(bytes);
    const std::string staged = read_back(file.path());
    if (staged.size() != bytes.size() || sha256_hex(staged) != hex)
        throw std::runtime_error("cannot write '" + path + "': its staged copy '" + file.path() +
                                 "' reads back other bytes than were written; check the disk");
    TemporaryFile mark(written_by_name(path));
    mark.write(mark_line(kOutputOwner, path, hex));
    HeldLock* held = nullptr;
    {
        const std::lock_guard<std::mutex> hold(held_mutex);
        held = held_lock(path);
    }
    // The journal: a kill between the two renames is finished by the next writer.
    if (!write_lock_record(held->fd, std::to_string(::getpid()) + "\npublishing " + hex + "\n")) {
        const int error = errno;
        throw std::runtime_error("cannot write '" + held->lock + "' (" + std::strerror(error) +
                                 "); check free space");
    }
    held->publishing = true;
    g_publishing = 1;
    try {
        file.rename_into_place();
    } catch (...) {
        held->publishing = false;  // nothing was published
        g_publishing = 0;
        throw;
    }
    mark.rename_into_place();  // a failure here keeps the journal for the next writer
    held->publishing = false;
    g_publishing = 0;
    require_in_place(path);  // written into the locked directory, wherever it is now
}

}  // namespace

std::string written_by_name(const std::string& path) { return path + ".written-by"; }

std::string sha256_hex(const std::string& bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 failed (OpenSSL's EVP_Digest)");
    static const char* const kHex = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < length; ++i) {
        hex += kHex[digest[i] >> 4];
        hex += kHex[digest[i] & 15];
    }
    return hex;
}

void check_output_names(const std::string& path, const std::string& what,
                        const std::vector<std::string>& patterns) {
    // How many bytes each pattern adds to NAME; its "<pid>" is up to 7 digits (pid_max is at
    // most 2^22): the same limit on every run, whatever this one's pid.
    auto extra_of = [](const std::string& pattern) {
        size_t extra = pattern.size() - 4;
        if (pattern.find("<pid>") != std::string::npos) extra += 2;
        return extra;
    };
    std::string longest = "NAME";
    for (const std::string& p : patterns)
        if (extra_of(p) > extra_of(longest)) longest = p;
    const size_t extra = extra_of(longest);
    const std::string parent = parent_of(path);
    long name_max = ::pathconf(parent.c_str(), _PC_NAME_MAX);
    if (name_max <= 0) name_max = NAME_MAX;  // no such directory yet: the usual limit
    long path_max = ::pathconf(parent.c_str(), _PC_PATH_MAX);
    if (path_max <= 0) path_max = PATH_MAX;
    const std::string name = name_of(path);
    auto refuse = [&](bool whole_path, size_t have, long limit, const std::string& shown) {
        const long room = limit - long(extra) - (whole_path ? 1 : 0);
        throw std::runtime_error(
            "cannot write " + what + " '" + shown + "': " + (whole_path ? "the path" : "its name") +
            " has " + std::to_string(have) + " bytes, and '" + longest +
            "', a name roformer writes beside it, would be over the file system's limit of " +
            std::to_string(limit) + " bytes (" + (whole_path ? "PATH_MAX" : "NAME_MAX") + "); " +
            (room > 0 ? "give a " + std::string(whole_path ? "path" : "name") + " of at most " +
                            std::to_string(room) + " bytes"
                      : std::string("write it into a directory with a shorter path")));
    };
    if (long(name.size() + extra) > name_max) refuse(false, name.size(), name_max, path);
    if (long(path.size() + extra) >= path_max)
        refuse(true, path.size(), path_max, path.substr(0, 60) + "…");
}

void check_staged_output_directory(const std::string& dir, const std::string& command) {
    std::string path = dir;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path.empty() || name_of(path) == "." || name_of(path) == "..") return;  // refused later
    check_output_names(path, "--out", {".NAME.partial-" + command + "-<pid>"});
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return;
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(path, ec).string();
    throw std::runtime_error("--out '" + dir + "' is a symbolic link (to '" + target + "'); " +
                             command +
                             " publishes by renaming a new directory over it, which would "
                             "replace the link, not its target; give the directory itself "
                             "as --out (" +
                             (ec ? "its real path" : "'" + target + "'") + ")");
}

void check_output_file(const std::string& path, const OutputRule& rule) {
    check_before_lock(path, rule);
    const bool taken = take_lock(path, rule);
    try {
        check_held(path, rule);
    } catch (...) {
        if (taken) release(path);
        throw;
    }
    // In a directory this process holds, that directory's lock keeps other writers out until
    // the write; its own lock file is not left there meanwhile.
    if (taken && locate(path).dir_fd != AT_FDCWD) {
        release(path);
    } else if (taken) {
        const std::lock_guard<std::mutex> hold(held_mutex);
        if (const HeldLock* held = held_lock(path)) remove_on_signal(held->fd, held->lock);
    }
}

void write_output_file(const std::string& path, const std::string& bytes, const OutputRule& rule) {
    check_before_lock(path, rule);
    take_lock(path, rule);  // or the one check_output_file took before the work
    try {
        check_held(path, rule);  // again: the user may have put a file there during the work
        publish(path, bytes);
    } catch (...) {
        release(path);
        throw;
    }
    release(path);
}

void install_output_file(const std::string& produced, const std::string& path,
                         const OutputRule& rule) {
    try {
        check_before_lock(path, rule);
        take_lock(path, rule);
        check_held(path, rule);
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
        release(path);
        throw;
    }
    release(path);
}

}  // namespace rf
