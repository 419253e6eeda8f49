// Room — io: what a lock file may be (see lock_file.hpp).
#include "io/lock_file.hpp"

#include <unistd.h>

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

}  // namespace rf
