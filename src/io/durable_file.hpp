// Room — io: files that survive a crash — durable writes, atomic replacement, content hashes.
//
// A checkpoint is only as safe as its weakest write: bytes still in the page cache when the
// machine stops are lost, and a rename is itself a directory write. These helpers fsync both.
#pragma once

#include <cstdint>
#include <string>

#include "io/fnv1a.hpp"  // fnv1a64, the manifests' content check

namespace rf {

// Upper bound of read_file_bytes unless told otherwise (16 GiB: a larger checkpoint than this
// project can train would not fit in a laptop's memory anyway).
inline constexpr uint64_t kMaxReadBytes = uint64_t(16) << 30;

// Writes `bytes` to `path` (created or truncated; a symlink there is refused, not followed) and
// fsyncs it, checking every write. Throws std::runtime_error naming the file on failure. Named
// outputs of the commands go through io/output_file.hpp, which builds on this.
void write_file_durably(const std::string& path, const std::string& bytes);

// bytes → "<path>.tmp-<pid>" → fsync → rename over <path> → fsync of the directory. Either the
// old file or the complete new one is at `path`, never a mix; the temporary is removed on failure.
void write_file_atomically(const std::string& path, const std::string& bytes);

// Renames `from` over `to` and fsyncs their directory (both must be in the same directory).
void rename_durably(const std::string& from, const std::string& to);

// Removes the file `path` if it is there (no error otherwise).
void remove_file_quietly(const std::string& path);

// Opens `path` (an existing regular file, not through a symlink) for appending; returns the
// descriptor, or -1 with errno set.
int open_for_append(const std::string& path);

// "<target>.tmp-<pid>", removed when the guard goes out of scope — however the scope is left —
// unless keep() was called (it was renamed into place, or a manifest names it for recovery).
class TemporaryFile {
public:
    explicit TemporaryFile(const std::string& target);
    TemporaryFile(TemporaryFile&& other) noexcept;
    TemporaryFile(const TemporaryFile&) = delete;
    TemporaryFile& operator=(const TemporaryFile&) = delete;
    TemporaryFile& operator=(TemporaryFile&&) = delete;
    ~TemporaryFile();
    const std::string& path() const { return path_; }
    void write(const std::string& bytes) { write_file_durably(path_, bytes); }
    // rename_durably over the target, then keep().
    void rename_into_place();
    void keep() { kept_ = true; }

private:
    std::string target_, path_;
    bool kept_ = false;
};

// fsync of a directory, which makes the renames in it durable (best effort: some filesystems
// refuse fsync on directories).
void fsync_directory(const std::string& dir);

// The name a writer gives its temporary copy of `path` ("<path>.tmp-<pid>"); cleaners look for
// the ".tmp-" in it.
std::string temporary_name(const std::string& path);

// The whole file's bytes (read_regular_file in src/io/read_file.hpp: the one rule for
// reading a named file); throws std::runtime_error naming it when it is missing, not a regular
// file or larger than max_bytes.
std::string read_file_bytes(const std::string& path, uint64_t max_bytes = kMaxReadBytes);

}  // namespace rf
