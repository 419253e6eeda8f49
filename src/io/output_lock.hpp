// Room — io: the lock of a named output file (output_file.cpp's step 2): "<path>.lock", flock'ed
// from the up-front check to the publish, its file the journal of a publication between its two
// renames, removed on a stop signal. Internal to output_file.cpp (see output_file.hpp).
#pragma once

#include <csignal>
#include <mutex>
#include <string>

#include "io/output_file.hpp"

namespace rf::output_lock {

// A lock this process holds: "<path>.lock", open and flock'ed.
struct HeldLock {
    int fd = -1;
    std::string lock;
    bool publishing = false;  // between the two renames: the lock file is the journal, kept
};

extern std::mutex held_mutex;  // guards held_lock's table
// The lock this process holds on `path`, or nullptr (under held_mutex).
HeldLock* held_lock(const std::string& path);
// Takes the lock of `path` unless this process holds it already; returns whether it took it.
bool take_lock(const std::string& path, const OutputRule& rule);
// Lets go of the lock of `path`, if this process holds it.
void release(const std::string& path);
// Replaces the lock file's content (our pid, and the journal line while publishing).
bool write_lock_record(int fd, const std::string& text);
// From now until it lets go, a stop signal that kills removes `lock` first (held by `fd`).
void remove_on_signal(int fd, const std::string& lock);
// Set between a publication's two renames: a stop signal then keeps the journal.
extern volatile std::sig_atomic_t g_publishing;

[[noreturn]] void refuse_output(const std::string& path, const OutputRule& rule,
                                const std::string& problem, const std::string& fix);

// Defined in output_file.cpp, called under the lock: what is at `path` is ours to replace;
// a publication a killed writer stopped between its renames is finished.
void check_held(const std::string& path, const OutputRule& rule);
void finish_publication(const std::string& path, const std::string& hex);

}  // namespace rf::output_lock
