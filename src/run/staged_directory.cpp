// Room — run: the staged directory transaction (see staged_directory.hpp).
#include "run/staged_directory.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/durable_file.hpp"
#include "io/output_file.hpp"
#include "run/created_directories.hpp"
#include "run/directory_kind.hpp"

namespace rf {

namespace fs = std::filesystem;

namespace {

// OUT as an absolute, normal path without a trailing '/': its parent holds the staging.
fs::path normal_out(const std::string& out) {
    std::error_code ec;
    std::string text = fs::absolute(fs::path(out), ec).lexically_normal().string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    const fs::path path(text);
    if (path.filename().empty() || path == path.root_path())
        throw std::runtime_error("--out '" + out + "' names no new directory; pick a new --out");
    return path;
}

std::string partial_prefix(const fs::path& out) {
    return "." + out.filename().string() + ".partial-";
}

// A staging directory is live while its writer holds its flock.
bool held(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return !free;
}

std::vector<PartialWrite> partial_writes(const fs::path& out) {
    std::vector<PartialWrite> found;
    const std::string prefix = partial_prefix(out);
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(out.parent_path(), ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) != 0 || !e.is_directory(ec)) continue;
        const std::string rest = name.substr(prefix.size());  // CMD-PID
        const size_t dash = rest.rfind('-');
        if (dash == std::string::npos) continue;
        found.push_back({rest.substr(0, dash), rest.substr(dash + 1), e.path().string(),
                         held(e.path())});
    }
    return found;
}

}  // namespace

std::optional<PartialWrite> find_partial_write(const std::string& out) {
    std::vector<PartialWrite> found;
    try {
        found = partial_writes(normal_out(out));
    } catch (const std::runtime_error&) {
        return std::nullopt;
    }
    if (found.empty()) return std::nullopt;
    for (const PartialWrite& p : found)
        if (p.live) return p;
    return found.back();
}

StagedDirectory::StagedDirectory(const std::string& out, const std::string& command)
    : out_(out), command_(command) {
    const fs::path target = normal_out(out);
    target_ = target.string();
    guard_ = std::make_unique<InterruptGuard>();
    InterruptGuard::quiet_notes();  // the Interrupted line says what happened
    // OUT's parents are made as `mkdir -p` would (`--out hf/classroom` in a fresh checkout);
    // a failure before the publish removes them again (run/created_directories.hpp).
    parents_top_ = outermost_missing(target.parent_path().string());
    try {
        lock_and_check(target);
    } catch (...) {
        if (created_) ::rmdir(target.c_str());  // only if empty
        remove_created_directories(target.parent_path().string(), parents_top_);
        if (out_fd_ >= 0) ::close(out_fd_);
        throw;
    }
}

void StagedDirectory::lock_and_check(const fs::path& target) {
    const std::string& out = out_;
    const std::string& command = command_;
    std::error_code made;
    fs::create_directories(target.parent_path(), made);
    if (made)
        throw std::runtime_error("cannot create the directory above --out '" + out + "' (" +
                                 made.message() + "); pick another --out");
    // 1. Lock OUT. A writer that opened OUT just before another published over it locks a
    //    directory that no longer has the name: it looks again.
    for (int attempt = 0; out_fd_ < 0; ++attempt) {
        struct stat st {};
        if (::mkdir(target.c_str(), 0755) == 0)
            created_ = true;
        else if (errno != EEXIST)
            throw std::runtime_error("cannot create --out '" + out + "' (" + std::strerror(errno) +
                                     "); pick another --out");
        if (::stat(target.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
            throw std::runtime_error("--out '" + out + "' is a file, not a directory; pick a new --out");
        const int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            throw std::runtime_error("cannot open --out '" + out + "' (" + std::strerror(errno) +
                                     "); check its permissions");
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            ::close(fd);
            const std::optional<PartialWrite> writer = find_partial_write(out);
            throw std::runtime_error(
                "--out '" + out + "' is being written by " +
                (writer ? "pid " + writer->pid + " (`roformer " + writer->command + "`)"
                        : std::string("another process")) +
                "; wait for it to finish or pick another --out");
        }
        struct stat locked {}, named {};
        if (::fstat(fd, &locked) == 0 && ::stat(target.c_str(), &named) == 0 &&
            locked.st_ino == named.st_ino && locked.st_dev == named.st_dev) {
            out_fd_ = fd;
        } else {
            ::close(fd);
            created_ = false;
            if (attempt == 8)
                throw std::runtime_error("--out '" + out +
                                         "' keeps being replaced by another process; pick another --out");
        }
    }
    // 2. Check, under the lock. OUT must be empty: everything else is refused by what it is.
    {
        std::error_code ec;
        if (!fs::is_empty(target, ec)) {
            DirectoryState state = inspect_directory(target.string());
            state.writer.clear();  // the lock it found held is ours
            throw std::runtime_error("--out '" + out + "' already exists and is not empty (it " +
                                     describe(state) + "); pick a new --out (" + command +
                                     " writes a new directory, never into one)");
        }
        for (const PartialWrite& stale : partial_writes(target)) {
            if (stale.live) continue;  // cannot be: its writer would hold OUT
            fs::remove_all(stale.path, ec);
            std::fprintf(stderr, "note: removed %s, the unfinished output of a stopped `roformer %s` (pid %s)\n",
                         stale.path.c_str(), stale.command.c_str(), stale.pid.c_str());
        }
        // 3. The staging directory, locked for as long as we write it.
        staging_ = (target.parent_path() / (partial_prefix(target) + command + "-" +
                                            std::to_string(::getpid())))
                       .string();
        fs::remove_all(staging_, ec);  // a reused pid's leftover
        staging_lock_.emplace(RunLock::acquire(staging_, false));
    }
}

std::string StagedDirectory::file(const std::string& name) const {
    return (fs::path(staging_) / name).string();
}

void StagedDirectory::write(const std::string& name, const std::string& bytes) {
    check_interrupt();
    write_file_atomically(file(name), bytes);
    record(name, sha256_hex(bytes));
}

void StagedDirectory::record(const std::string& name, const std::string& sha256) {
    if (!sha256_.count(name)) order_.push_back(name);
    sha256_[name] = sha256;
}

void StagedDirectory::check_interrupt() const {
    if (const int sig = InterruptGuard::pending())
        throw Interrupted(sig, command_,
                          "; nothing was written to '" + out_ + "'; run it again to write it");
}

void StagedDirectory::publish() {
    check_interrupt();
    // 4. Every file reads back as written: a write that failed silently is found here.
    for (const std::string& name : order_)
        if (!sha256_.at(name).empty() && sha256_hex(read_file_bytes(file(name))) != sha256_.at(name))
            throw std::runtime_error("'" + file(name) + "' does not hold what " + command_ +
                                     " wrote; nothing was written to '" + out_ +
                                     "'; check the disk and run it again");
    fsync_directory(staging_);
    check_interrupt();
    // 5. One rename over the empty OUT we hold.
    const fs::path target(target_);
    if (::rename(staging_.c_str(), target.c_str()) != 0) {
        const int error = errno;
        throw std::runtime_error(
            "cannot publish '" + out_ + "' (" + std::strerror(error) + ")" +
            (error == ENOTEMPTY || error == EEXIST
                 ? "; files were put into it while " + command_ + " ran; pick a new --out"
                 : std::string("; pick another --out")));
    }
    published_ = true;
    fsync_directory(target.parent_path().string());
    staging_lock_.reset();
    for (const std::string& name : order_) {
        struct stat st {};
        if (::stat((target / name).c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            throw std::runtime_error("'" + (target / name).string() +
                                     "' is missing after the rename; the directory was changed "
                                     "while " + command_ + " ran");
    }
}

StagedDirectory::~StagedDirectory() {
    if (!published_) {
        std::error_code ec;
        if (staging_lock_ && staging_lock_->in_place()) fs::remove_all(staging_, ec);
        staging_lock_.reset();
        struct stat locked {}, named {};
        const fs::path target(target_);
        if (created_ && ::fstat(out_fd_, &locked) == 0 && ::stat(target.c_str(), &named) == 0 &&
            locked.st_ino == named.st_ino)
            ::rmdir(target.c_str());  // only if empty
        if (!fs::exists(fs::symlink_status(target, ec)))
            remove_created_directories(target.parent_path().string(), parents_top_);
    }
    ::close(out_fd_);
}

}  // namespace rf
