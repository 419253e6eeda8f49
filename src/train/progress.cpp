// Room — train: the progress line (see progress.hpp).
#include "train/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "tensor/format.hpp"

namespace rf {

std::string format_duration(double seconds) {
    const long s = long(seconds + 0.5);
    std::ostringstream o;
    if (s >= 3600) o << s / 3600 << "h";
    o << std::setw(2) << std::setfill('0') << (s / 60) % 60 << "m" << std::setw(2) << s % 60 << "s";
    return o.str();
}

ProgressLine::ProgressLine(std::ostream& log, bool quiet, size_t total_steps)
    : log_(log),
      quiet_(quiet),
      terminal_(!quiet && isatty(fileno(stderr)) && &log == &std::cerr),
      total_steps_(total_steps) {}

void ProgressLine::update(const MetricsRow& r, double eta_s) {
    if (quiet_) return;
    const std::string line =
        "step " + std::to_string(r.step) + "/" + std::to_string(total_steps_) + "  loss " +
        format_fixed(r.train_loss) +
        (r.eval
             ? "  val " + format_fixed(r.eval->loss) + " acc " + format_fixed(r.eval->accuracy, 3)
             : "") +
        "  lr " + format_printf("%.3g", r.lr) + "  " + format_fixed(r.tokens_per_s, 0) +
        " tok/s  ETA " + format_duration(eta_s);
    if (!terminal_) {
        log_ << line << "\n";
        return;
    }
    const int width = 24;
    const int filled = int(width * double(r.step) / double(total_steps_));
    log_ << "\r[" << std::string(size_t(filled), '#') << std::string(size_t(width - filled), '.')
         << "] " << line << "   " << (r.eval ? "\n" : "") << std::flush;
}

void ProgressLine::finish() {
    if (terminal_) log_ << "\n";
}

}  // namespace rf
