// Run — the stop-after-this-step signal handlers (see interrupt.hpp).
#include "run/interrupt.hpp"

#include <csignal>
#include <string>

#include <unistd.h>

namespace rf {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_count = 0;
volatile std::sig_atomic_t g_quiet = 0;
int g_depth = 0;  // nesting of live guards (one thread installs them)
struct sigaction g_old[4];

extern "C" void on_stop_signal(int sig) {
    g_count = g_count + 1;
    if (g_signal != 0) ::_exit(128 + sig);  // the second one: now (async-safe calls only)
    g_signal = sig;
    static const char kNote[] = "\nstopping after this step (again to quit at once)\n";
    if (sig != SIGPIPE && !g_quiet) (void)!::write(2, kNote, sizeof kNote - 1);
}

}  // namespace

InterruptGuard::InterruptGuard() {
    if (g_depth++ > 0) return;
    g_signal = 0;
    g_count = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // file writes in the step carry on rather than fail with EINTR
    for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
}

InterruptGuard::~InterruptGuard() {
    if (--g_depth > 0) return;
    for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
}

int InterruptGuard::pending() { return g_signal; }

std::string stop_signal_name(int sig) {
    switch (sig) {
        case SIGINT: return "Ctrl-C (SIGINT)";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGPIPE: return "SIGPIPE";
        default: return "signal " + std::to_string(sig);
    }
}

int InterruptGuard::count() { return g_count; }

void InterruptGuard::quiet_notes() { g_quiet = 1; }

}  // namespace rf
