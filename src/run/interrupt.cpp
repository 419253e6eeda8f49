// Room — run: the stop-after-this-step signal handlers and their watchdog (see interrupt.hpp).
#include "run/interrupt.hpp"

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <string>

#include "io/platform.hpp"

namespace rf {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
// Shared with the watchdog thread and the handlers: lock-free atomics (async-signal-safe).
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
std::atomic<int> g_quiet{0};
std::atomic<int> g_depth{0};  // nesting of live guards (one thread installs them)
std::atomic<int> g_epoch{0};  // outermost guards installed so far: a countdown is for one
std::atomic<int> g_holds{0};  // live StopExitHolds
std::atomic<int> g_grace{kStopGraceSeconds};  // the watchdog's wait (note_work_seconds)
struct sigaction g_old[4];

// The watchdog: one thread per process, started by the first guard, asleep on g_wake until a
// first signal posts it (sem_post is async-signal-safe).
sem_t g_wake;
std::atomic<pid_t> g_watchdog_pid{0};  // the process whose watchdog waits on g_wake

// A line on stderr, unless it cannot take one within `wait_ms`: a stderr pipe nobody reads
// must not hold the note or the watchdog's exit (poll and write are async-signal-safe).
void write_if_room(const char* text, size_t size, int wait_ms) {
    pollfd err{2, POLLOUT, 0};
    if (::poll(&err, 1, wait_ms) == 1 && (err.revents & POLLOUT)) (void)!::write(2, text, size);
}

extern "C" void on_stop_signal(int sig) {
    g_count.fetch_add(1);
    if (g_signal.load() != 0) ::_exit(128 + sig);  // the second one: now (async-safe calls only)
    g_signal.store(sig);
    static const char kNote[] = "\nstopping after this step (again to quit at once)\n";
    if (sig != SIGPIPE && !g_quiet.load()) write_if_room(kNote, sizeof kNote - 1, 0);
    if (g_watchdog_pid.load() == ::getpid()) ::sem_post(&g_wake);
}

extern "C" void* watchdog(void*) {
    platform::name_this_thread("rf-stop-watch");  // (ps -L, gdb: what it is)
    for (;;) {
        while (::sem_wait(&g_wake) != 0) {  // EINTR: a handler ran on this thread
        }
        const int epoch = g_epoch.load();
        timespec deadline{};
        ::clock_gettime(CLOCK_MONOTONIC, &deadline);
        const int grace = g_grace.load();
        deadline.tv_sec += grace;
        platform::sleep_until(deadline);
        // Stopped in time (the guard is gone), or a later command's guard: not ours to end.
        if (g_depth.load() == 0 || g_epoch.load() != epoch || g_signal.load() == 0) continue;
        while (g_holds.load() > 0) {  // a checkpoint commit: let it finish
            timespec soon{};
            ::clock_gettime(CLOCK_MONOTONIC, &soon);
            soon.tv_nsec += 10'000'000;
            if (soon.tv_nsec >= 1'000'000'000) soon.tv_sec += 1, soon.tv_nsec -= 1'000'000'000;
            platform::sleep_until(soon);
        }
        // No allocation here: the stuck thread may hold malloc's lock.
        const int sig = g_signal.load();
        const char* name = sig == SIGINT    ? "Ctrl-C (SIGINT)"
                           : sig == SIGTERM ? "SIGTERM"
                           : sig == SIGHUP  ? "SIGHUP"
                                            : "SIGPIPE";
        char line[320];
        const int n = std::snprintf(
            line, sizeof line,
            "roformer: stopped by %s: still busy %d s after it, so stopped without finishing "
            "(what was committed before is intact; a run resumes from its last checkpoint)\n",
            name, grace);
        if (n > 0) write_if_room(line, std::min(size_t(n), sizeof line - 1), 1000);
        ::_exit(128 + sig);
    }
    return nullptr;
}

// Starts this process's watchdog (again after a fork: the child has none). Its thread blocks
// every signal but the stop signals: while the other threads hold them (a product block), the
// kernel hands a stop signal to it. A thread that cannot be made (no memory) leaves the
// process as it was without one: the first signal stops after the step, the second at once.
void start_watchdog() {
    const pid_t self = ::getpid();
    if (g_watchdog_pid.load() == self) return;
    if (::sem_init(&g_wake, 0, 0) != 0) return;  // (macOS has no unnamed semaphores: none there)
    sigset_t all, before;
    sigfillset(&all);
    for (int sig : kSignals) sigdelset(&all, sig);
    pthread_sigmask(SIG_BLOCK, &all, &before);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);  // it only waits and writes one line
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    const bool started = pthread_create(&thread, &attr, watchdog, nullptr) == 0;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (!started) return;
    g_watchdog_pid.store(self);
    if (g_signal.load() != 0) ::sem_post(&g_wake);  // a signal before this guard (a fork's child)
}

}  // namespace

InterruptGuard::InterruptGuard() {
    if (g_depth.fetch_add(1) > 0) {
        start_watchdog();  // a forked child inherits the guard but not the parent's thread
        return;
    }
    g_signal.store(0);
    g_count.store(0);
    g_epoch.fetch_add(1);
    start_watchdog();  // first: the handlers below take effect at once, as they always did
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // file writes in the step carry on rather than fail with EINTR
    for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
}

InterruptGuard::~InterruptGuard() {
    if (g_depth.fetch_sub(1) > 1) return;
    for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
}

int InterruptGuard::pending() { return g_signal.load(); }

int InterruptGuard::after_work(double work_seconds) {
    note_work_seconds(work_seconds);
    return pending();
}

std::string stop_signal_name(int sig) {
    switch (sig) {
        case SIGINT: return "Ctrl-C (SIGINT)";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGPIPE: return "SIGPIPE";
        default: return "signal " + std::to_string(sig);
    }
}

int InterruptGuard::count() { return g_count.load(); }

void InterruptGuard::quiet_notes() { g_quiet.store(1); }

StopExitHold::StopExitHold() { g_holds.fetch_add(1); }
StopExitHold::~StopExitHold() { g_holds.fetch_sub(1); }

void note_work_seconds(double seconds) {
    const double wanted = std::ceil(3 * seconds);
    if (!(wanted < 1e6)) return;  // (a clock gone wrong: keep the bound as it is)
    int grace = g_grace.load();
    while (int(wanted) > grace && !g_grace.compare_exchange_weak(grace, int(wanted))) {
    }
}

}  // namespace rf
