// Stage 1 — tensor: the op profiler (see profile.hpp).
#include "tensor/profile.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace rf::profile {
namespace {

using Clock = std::chrono::steady_clock;

bool g_on = false;
Clock::time_point g_mark;
std::map<std::string, Row>& table() {
    static std::map<std::string, Row> rows;
    return rows;
}

double seconds(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
}

}  // namespace

bool enabled() { return g_on; }
void enable(bool on) {
    g_on = on;
    mark();
}
void reset() { table().clear(); }
void mark() { g_mark = Clock::now(); }

void forward_op(const char* op) {
    const Clock::time_point now = Clock::now();
    add(op, false, seconds(g_mark, now));
    g_mark = now;
}

void add(const char* name, bool backward, double s) {
    Row& row = table()[name];
    row.name = name;
    ++(backward ? row.backward_calls : row.forward_calls);
    (backward ? row.backward_s : row.forward_s) += s;
}

Scope::Scope(const char* name, bool backward) : name_(name), backward_(backward), on_(g_on) {
    if (on_) start_ = Clock::now();
}
Scope::~Scope() {
    if (on_) add(name_, backward_, seconds(start_, Clock::now()));
}

std::vector<Row> rows() {
    std::vector<Row> out;
    for (const auto& [name, row] : table()) out.push_back(row);
    std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) {
        return a.forward_s + a.backward_s > b.forward_s + b.backward_s;
    });
    return out;
}

std::string report(size_t steps, double step_seconds) {
    const double n = double(std::max<size_t>(steps, 1));
    const double step_ms = 1e3 * step_seconds / n;
    std::string out;
    char line[160];
    std::snprintf(line, sizeof line, "profile: %zu steps, %.1f ms per step\n", steps, step_ms);
    out += line;
    std::snprintf(line, sizeof line, "  %-22s %9s %12s %12s %8s\n", "op or phase", "calls/step",
                  "forward ms", "backward ms", "share");
    out += line;
    double accounted = 0;
    for (const Row& r : rows()) {
        const double ms = 1e3 * (r.forward_s + r.backward_s) / n;
        accounted += ms;
        std::snprintf(line, sizeof line, "  %-22s %9.1f %12.2f %12.2f %7.1f%%\n", r.name.c_str(),
                      double(r.forward_calls ? r.forward_calls : r.backward_calls) / n, 1e3 * r.forward_s / n, 1e3 * r.backward_s / n,
                      step_ms > 0 ? 100.0 * ms / step_ms : 0.0);
        out += line;
    }
    std::snprintf(line, sizeof line, "  %-22s %9s %12s %12s %7.1f%%\n", "(not in a row)", "", "",
                  "", step_ms > 0 ? 100.0 * std::max(0.0, step_ms - accounted) / step_ms : 0.0);
    out += line;
    return out;
}

}  // namespace rf::profile
