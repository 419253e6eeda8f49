// io — named output files, written as transactions (see output_file.hpp).
#include "io/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/durable_file.hpp"
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

// The line of a "<path>.written-by" mark (scripts/script_outputs.py writes the same).
std::string mark_line(const std::string& owner, const std::string& path, const std::string& bytes) {
    const size_t slash = path.find_last_of('/');
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return owner + " wrote " + name + "; sha256 " + sha256_hex(bytes) + "\n";
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

void check_output_file(const std::string& path, const OutputRule& rule) {
    auto refuse = [&](const std::string& problem, const std::string& fix) {
        throw std::runtime_error("cannot write " + rule.what + " '" + path + "': " + problem +
                                 "; " + fix);
    };
    if (path.empty()) refuse("the name is empty", "give a file name");
    struct stat dir {};
    const std::string parent = parent_of(path);
    if (::stat(parent.c_str(), &dir) != 0)
        refuse("its directory '" + parent + "' does not exist",
               "create it first or pick another path");
    if (!S_ISDIR(dir.st_mode)) refuse("'" + parent + "' is not a directory", "pick another path");
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

void write_output_file(const std::string& path, const std::string& bytes, const OutputRule& rule) {
    check_output_file(path, rule);
    const std::string mark = written_by_name(path);
    write_file_atomically(path, bytes);
    // A crash between the two writes leaves a file whose hash is not its mark's: refused next
    // time as changed, never replaced silently.
    write_file_atomically(mark, mark_line(kOutputOwner, path, bytes));
}

void install_output_file(const std::string& produced, const std::string& path,
                         const OutputRule& rule) {
    try {
        check_output_file(path, rule);
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
        throw;
    }
}

}  // namespace rf
