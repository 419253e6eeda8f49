// Room — io: the few answers the operating system gives its own way (platform.cpp): Linux's through
// /proc and glibc, macOS's through its own documented calls. Everything else the project calls
// is plain POSIX. The macOS branch was written from Apple's documentation and has not been
// compiled or run on a Mac (docs/testing.md, "The libc++ build").
#pragma once

#include <ctime>
#include <string>

namespace rf::platform {

// Starts this program again in this process (same pid, same arguments, the environment as it
// is now). Returns only if that failed. Linux: /proc/self/exe, the running file even if it was
// replaced on disk since; macOS: the path _NSGetExecutablePath gives.
void restart_this_program(char** argv);

// The running program's file, symbolic links resolved; empty when unknown.
std::string executable_path();

// A path that opens the directory open as `fd` (and, below it, its files). Linux:
// /proc/self/fd/N, which follows the directory through renames; macOS: its path now
// (fcntl F_GETPATH), or "" when unknown.
std::string descriptor_path(int fd);

// Where the directory open as `fd` is now, by name; empty when unknown.
std::string descriptor_place(int fd);

// The bytes of address space this process has mapped now (what ulimit -v counts); 0 when
// unknown. Linux: /proc/self/statm's first field; macOS: task_info's virtual_size.
double mapped_bytes();

// Asks the kernel to send `sig` to this process when its parent exits (Linux: PR_SET_PDEATHSIG).
// macOS has no such request: returns false, and the process outlives its parent.
bool signal_when_parent_exits(int sig);

// Sleeps until `deadline` on CLOCK_MONOTONIC, through interruptions. Async-signal-safe.
void sleep_until(const timespec& deadline);

// Names the calling thread (ps -L, a debugger).
void name_this_thread(const char* name);

}  // namespace rf::platform
