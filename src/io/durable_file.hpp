// io — files that survive a crash — durable writes, atomic replacement, content hashes.
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
