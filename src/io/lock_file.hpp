// Room — io: the one rule for what a lock file may be — a file this program created. The
// output files' locks ("<path>.lock", io/output_lock.cpp) and a run directory's `lock`
// (run/run_lock.cpp) are created with O_CREAT | O_EXCL; a file already under such a name is
// taken over only when it can be one a killed roformer of this user left: a regular file with
// one name (st_nlink == 1), owned by this user. A hard link to a user's file (`ln`, `cp -al`)
// would otherwise be rewritten with our record and removed, and the user's file changed.
#pragma once

#include <string>

#include <sys/stat.h>

namespace rf {

// "" when `st` (fstat of an existing file under a lock's name, opened without following a
// symlink) may be a lock a roformer of this user left; else what it is, for the refusal:
// "not a regular file", "a hard link: one of 2 names of one file", "owned by uid 1001, not by
// this user (uid 1000)".
std::string foreign_lock(const struct stat& st);

// The fix for the lock file `lock` that cannot be created or opened (errno `error`) in the
// directory `dir_fd` (or AT_FDCWD), naming the true cause: a directory where the lock goes
// (EISDIR), a file system with no free inodes (ENOSPC while statvfs counts none free), a full
// disk (ENOSPC), else the permissions.
std::string lock_open_fix(int error, int dir_fd, const std::string& lock);

}  // namespace rf
