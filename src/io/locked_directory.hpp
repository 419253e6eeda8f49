// Room — io: the directories this process holds locked, and the one rule for writing under them.
//
// A run's lock (run/run_lock.hpp) is an flock on a descriptor of its directory: it holds the
// directory, not its name. `mv MV MV_old` while a run writes MV moves the locked directory
// away, and a second `train --out MV` then locks a new MV. If the first run kept writing by
// path name its checkpoints would land in the second run's directory.
//
// So a lock registers its descriptor here, and every write of io/durable_file.hpp under a
// registered directory resolves its path from that descriptor (openat, renameat, unlinkat,
// fsync of the descriptor), not from the name: a renamed run keeps writing into itself.
// After each commit the writer calls require_in_place, which compares the name with the
// locked inode (st_dev + st_ino) and stops the run with one line saying where its files are.
//
//   locate("MV/model.safetensors")  →  {fd of MV as locked, "model.safetensors"}
//   locate("elsewhere/x.csv")       →  {AT_FDCWD, "elsewhere/x.csv"}   (no lock above it)
#pragma once

#include <string>
#include <vector>

namespace rf {

// Where a path lives: a directory descriptor and the path relative to it (AT_FDCWD + the path
// itself when no directory this process locked lies above it).
struct LocatedPath {
    int dir_fd;
    std::string relative;
};

// Registered by RunLock for as long as it holds `fd`, a descriptor of `dir`.
void register_locked_directory(const std::string& dir, int fd);
void unregister_locked_directory(int fd);

// The deepest registered directory at or above `path` (lexically, after making it absolute).
LocatedPath locate(const std::string& path);

// Throws std::runtime_error (one line: where the files are now, that nothing was written into
// what has the name now) when a registered directory at or above `path` no longer is at its
// name — it was renamed, deleted or replaced.
void require_in_place(const std::string& path);

// Records that this process wrote `path` (a file directly inside a registered directory);
// names_written_in lists them for that directory's descriptor, for a run that fails before
// its first checkpoint and removes what it made (run/run_directory.hpp).
void note_written(const LocatedPath& where);
std::vector<std::string> names_written_in(int fd);

}  // namespace rf
