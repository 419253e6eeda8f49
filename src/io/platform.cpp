// Room — io: the operating system's own answers (see platform.hpp). The __APPLE__ branches use only
// calls Apple documents (dyld, fcntl F_GETPATH, Mach task_info, pthread); not compiled here.
#include "io/platform.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>
#include <fstream>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#include <mach/mach.h>
#include <sys/param.h>

#include <cstdint>
#include <cstring>
#else
#include <sys/prctl.h>
#endif

namespace rf::platform {

namespace fs = std::filesystem;

#if defined(__APPLE__)

static std::string dyld_executable_path() {
    uint32_t size = 0;
    _NSGetExecutablePath(nullptr, &size);  // -1, and the size the path needs
    std::string path(size, '\0');
    if (size == 0 || _NSGetExecutablePath(path.data(), &size) != 0) return "";
    path.resize(std::strlen(path.c_str()));
    return path;
}

void restart_this_program(char** argv) {
    const std::string path = dyld_executable_path();
    if (!path.empty()) ::execv(path.c_str(), argv);
}

std::string executable_path() {
    std::error_code ec;
    const fs::path path = fs::canonical(dyld_executable_path(), ec);
    return ec ? std::string() : path.string();
}

std::string descriptor_path(int fd) { return descriptor_place(fd); }

std::string descriptor_place(int fd) {
    char path[MAXPATHLEN] = {};
    return ::fcntl(fd, F_GETPATH, path) != -1 ? std::string(path) : std::string();
}

double mapped_bytes() {
    mach_task_basic_info_data_t info{};
    mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
    if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, reinterpret_cast<task_info_t>(&info),
                  &count) != KERN_SUCCESS)
        return 0.0;
    return double(info.virtual_size);
}

bool signal_when_parent_exits(int) { return false; }

// No clock_nanosleep on macOS: nanosleep for what is left, read again after each interruption.
void sleep_until(const timespec& deadline) {
    for (;;) {
        timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        timespec left{deadline.tv_sec - now.tv_sec, deadline.tv_nsec - now.tv_nsec};
        if (left.tv_nsec < 0) left.tv_sec -= 1, left.tv_nsec += 1'000'000'000;
        if (left.tv_sec < 0) return;
        if (::nanosleep(&left, nullptr) == 0) return;
    }
}

void name_this_thread(const char* name) { pthread_setname_np(name); }

#else  // Linux

void restart_this_program(char** argv) { ::execv("/proc/self/exe", argv); }

std::string executable_path() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.string();
}

std::string descriptor_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

std::string descriptor_place(int fd) {
    char target[PATH_MAX + 1] = {};
    const std::string link = descriptor_path(fd);
    const ssize_t n = ::readlink(link.c_str(), target, PATH_MAX);
    return n > 0 ? std::string(target, size_t(n)) : std::string();
}

double mapped_bytes() {
    std::ifstream statm("/proc/self/statm");  // first field: the pages mapped (VmSize)
    double pages = 0;
    const long page = sysconf(_SC_PAGE_SIZE);
    return statm >> pages && page > 0 ? pages * double(page) : 0.0;
}

bool signal_when_parent_exits(int sig) { return ::prctl(PR_SET_PDEATHSIG, sig) == 0; }

void sleep_until(const timespec& deadline) {
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
    }
}

void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

#endif

}  // namespace rf::platform
