// Room — io: what a lock file may be (see lock_file.hpp).
#include "io/lock_file.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace rf {

std::string foreign_lock(const struct stat& st) {
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    if (st.st_nlink != 1)
        return "a hard link: one of " + std::to_string(st.st_nlink) + " names of one file";
    if (st.st_uid != ::geteuid())
        return "owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
               std::to_string(::geteuid()) + ")";
    return "";
}

std::string lock_open_fix(int error, int dir_fd, const std::string& lock) {
    if (error == EISDIR) return "a directory stands where the lock goes: move it away";
    if (error == ENOSPC) {
        // dir_fd may be AT_FDCWD (a path relative to no held directory): then the lock's own
        // directory by name
        struct statvfs fs {};
        const std::string parent = std::filesystem::path(lock).parent_path().string();
        const bool read = dir_fd >= 0 ? ::fstatvfs(dir_fd, &fs) == 0
                                      : ::statvfs(parent.empty() ? "." : parent.c_str(), &fs) == 0;
        if (read && fs.f_files > 0 && fs.f_favail == 0)
            return "the file system has no free inodes (df -i shows IFree 0): delete files "
                   "there, or write elsewhere";
        return "free some disk space";
    }
    return "check the directory's permissions";
}

}  // namespace rf
