// Room — io: the one rule for reading a file that a user or a run directory names
// (corpus, tokenizer, config, checkpoint, manifest). Every reader in the library goes through
// it, so every such file is refused the same way, before a byte is read.
#pragma once

#include <cstdint>
#include <string>

namespace rf {

// The file's size. Throws std::runtime_error "<what> '<path>' <problem>; <fix>" when the path
// is missing or unreadable ("not found or not readable"), a directory ("is a directory; give
// a file"), or a
// FIFO, socket or device ("is not a regular file (a FIFO)" …: a FIFO can block a reader
// forever, /dev/zero never ends). Symlinks are followed.
uint64_t require_regular_file(const std::string& path, const std::string& what,
                              const std::string& fix);

// The mirror rule for a directory argument (a run directory, --runs …): throws
// std::runtime_error "<what> '<path>' is a file, not a directory; <fix>" or
// "<what> '<path>' does not exist; <fix>". Symlinks are followed.
void require_directory(const std::string& path, const std::string& what, const std::string& fix);

// The whole file, after require_regular_file; one over max_bytes is refused by its size
// ("<what> '<path>' has N bytes, over the limit of M; <fix>") without reading it.
std::string read_regular_file(const std::string& path, const std::string& what,
                              const std::string& fix, uint64_t max_bytes);

}  // namespace rf
