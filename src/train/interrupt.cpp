// Stage 7 — train: the stop-after-this-step signal handlers (see interrupt.hpp).
#include "train/interrupt.hpp"

#include <csignal>

#include <unistd.h>

namespace rf {

namespace {

volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term;

extern "C" void on_stop_signal(int sig) {
    if (g_signal != 0) ::_exit(128 + sig);  // the second one: now (only async-safe calls here)
    g_signal = sig;
    static const char kNote[] = "\nstopping after this step (again to quit at once)\n";
    (void)!::write(2, kNote, sizeof kNote - 1);
}

}  // namespace

InterruptGuard::InterruptGuard() {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // file writes in the step carry on rather than fail with EINTR
    sigaction(SIGINT, &sa, &g_old_int);
    sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
}

int InterruptGuard::pending() { return g_signal; }

}  // namespace rf
