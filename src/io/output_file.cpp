// Room — io: named output files, written as transactions (see output_file.hpp).
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
#include "io/output_lock.hpp"
#include "io/read_file.hpp"

namespace rf {

using namespace output_lock;  // the lock (step 2): output_lock.cpp

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

}  // namespace

// Under the lock: what is at `path` now is ours to replace (or nothing is there).
void output_lock::check_held(const std::string& path, const OutputRule& rule) {
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

// A publication a killed writer stopped between its two renames: the file already holds the
// bytes the journal names, the mark does not yet. Finished here, under the lock.
void output_lock::finish_publication(const std::string& path, const std::string& hex) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    if (sha256_hex(read_file_bytes(path)) != hex) return;  // stopped before the file's rename
    write_file_atomically(written_by_name(path), mark_line(kOutputOwner, path, hex));
}

namespace {

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

namespace {

// The bytes a name pattern takes once written: its "<pid>" is up to 7 digits (pid_max is at most
// 2^22), the same limit on every run, whatever this one's pid.
size_t written_length(const std::string& pattern) {
    return pattern.size() + (pattern.find("<pid>") != std::string::npos ? 2 : 0);
}

// The file system's NAME_MAX and PATH_MAX where `path` is, or would be (pathconf of its deepest
// existing directory; the usual limits where none answers).
std::pair<long, long> name_and_path_max(std::string path) {
    struct stat st {};
    while (path != "." && path != "/" && ::stat(path.c_str(), &st) != 0) path = parent_of(path);
    const long name_max = ::pathconf(path.c_str(), _PC_NAME_MAX);
    const long path_max = ::pathconf(path.c_str(), _PC_PATH_MAX);
    return {name_max > 0 ? name_max : NAME_MAX, path_max > 0 ? path_max : PATH_MAX};
}

}  // namespace

void check_directory_names(const std::string& dir, const std::string& what,
                           const std::vector<std::string>& inside) {
    const auto [name_max, path_max] = name_and_path_max(dir);
    const std::string shown = dir.size() > 60 ? dir.substr(0, 60) + "…" : dir;
    auto refuse = [&](const std::string& problem, const std::string& fix) {
        throw std::runtime_error("cannot write " + what + " '" + shown + "': " + problem +
                                 "; " + fix);
    };
    std::string longest;
    for (const std::string& path : inside)
        if (written_length(path) > written_length(longest)) longest = path;
    for (const std::string& path : {dir, longest})
        for (const std::filesystem::path& part : std::filesystem::path(path))
            if (long(written_length(part.string())) > name_max)
                refuse("'" + part.string().substr(0, 40) + "…'" +
                           (path == dir ? ", a directory in it," : " in '" + path +
                                "', a path roformer writes inside it,") +
                           " has " + std::to_string(written_length(part.string())) +
                           " bytes, over the file system's limit of " +
                           std::to_string(name_max) + " bytes for a name (NAME_MAX)",
                       path == dir ? "give shorter directory names" : "give shorter names");
    const size_t total = dir.size() + 1 + written_length(longest);
    if (long(total) >= path_max)
        refuse("the path has " + std::to_string(dir.size()) + " bytes, and '" + longest +
                   "', a path roformer writes inside it, would take it to " +
                   std::to_string(total) + ", over the file system's limit of " +
                   std::to_string(path_max) + " bytes (PATH_MAX)",
               "give a path of at most " +
                   std::to_string(path_max - 2 - long(written_length(longest))) + " bytes");
}

void check_output_names(const std::string& path, const std::string& what,
                        const std::vector<std::string>& patterns) {
    // How many bytes each pattern adds to NAME. A pattern that goes on past a '/' (a file inside
    // the directory the name makes) adds its part before the '/' to the name, all to the path.
    auto extra_of = [](const std::string& pattern) { return written_length(pattern) - 4; };
    std::string longest = "NAME", longest_name = "NAME";
    for (const std::string& p : patterns) {
        if (extra_of(p) > extra_of(longest)) longest = p;
        const std::string name_part = p.substr(0, p.find('/'));
        if (extra_of(name_part) > extra_of(longest_name)) longest_name = name_part;
    }
    const auto [name_max, path_max] = name_and_path_max(parent_of(path));
    const std::string name = name_of(path);
    auto refuse = [&](bool whole_path, size_t have, long limit, const std::string& shown) {
        const std::string& pattern = whole_path ? longest : longest_name;
        const long room = limit - long(extra_of(pattern)) - (whole_path ? 1 : 0);
        throw std::runtime_error(
            "cannot write " + what + " '" + shown + "': " + (whole_path ? "the path" : "its name") +
            " has " + std::to_string(have) + " bytes, and '" + pattern + "', a " +
            (pattern.find('/') == std::string::npos ? "name" : "path") +
            " roformer writes beside it, would be over the file system's limit of " +
            std::to_string(limit) + " bytes (" + (whole_path ? "PATH_MAX" : "NAME_MAX") + "); " +
            (room > 0 ? "give a " + std::string(whole_path ? "path" : "name") + " of at most " +
                            std::to_string(room) + " bytes"
                      : std::string("write it into a directory with a shorter path")));
    };
    if (long(name.size() + extra_of(longest_name)) > name_max)
        refuse(false, name.size(), name_max, path);
    if (long(path.size() + extra_of(longest)) >= path_max)
        refuse(true, path.size(), path_max, path.substr(0, 60) + "…");
}

void check_staged_output_directory(const std::string& dir, const std::string& command,
                                   const std::vector<std::string>& inside) {
    std::string path = dir;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path.empty() || name_of(path) == "." || name_of(path) == "..") return;  // refused later
    check_directory_names(path, "--out", {});  // every part of it
    // The staging directory's name, and every path inside it (longer than the same inside OUT).
    const std::string staging = ".NAME.partial-" + command + "-<pid>";
    std::vector<std::string> patterns = {staging};
    for (const std::string& name : inside) patterns.push_back(staging + "/" + name);
    check_output_names(path, "--out", patterns);
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
